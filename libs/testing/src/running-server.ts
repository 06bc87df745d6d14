/** One running incarnation of a server, whatever runs it (a child process or a container). */
export interface RunningServer {
  /** Recent stdout/stderr, to explain a failure. */
  output(): string;
  /** Set when the server died without being asked to; the text says how. */
  exitReason(): string | undefined;
  /** Delivers `signal` and resolves once the server is gone. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Asks politely (SIGTERM), then forces (SIGKILL) after `graceMs`; resolves once gone. */
  terminate(graceMs: number): Promise<void>;
}

export type LaunchServer = () => Promise<RunningServer>;
