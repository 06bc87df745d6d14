import { RunDriver } from "./run-driver.js";
import { sleep, spawnBench } from "./procs.js";
import { Samples } from "./stats.js";

// Runs per driver socket, under the default maxInFlightPerConnection (64).
const RUNS_PER_SOCKET = 32;

/** What a background load did between `start` and `stop`. */
export interface RunLoadSummary {
  runs: number;
  ok: number;
  failed: number;
  /** Wall time of each finished run, send to answer (a queued run's wait included). */
  runMs: { p50: number; p99: number };
  wallMs: number;
}

/**
 * `runs` agent runs kept going on one gateway: each slot starts its next run as soon as its last
 * one answers, on its own session key (runs on one session take turns, so a slot's runs never
 * wait for each other, and the store gains `runs` sessions, not one per run).
 */
export class RunLoad {
  private stopping = false;
  private ok = 0;
  private failed = 0;
  private readonly durations = new Samples();
  private readonly started = performance.now();
  private readonly loops: Array<Promise<void>>;

  private constructor(
    private readonly drivers: RunDriver[],
    private readonly runs: number,
    params: { agentId: string; keyPrefix: string },
  ) {
    this.loops = Array.from({ length: runs }, (_, slot) => this.loop(drivers[slot % drivers.length]!, `${params.keyPrefix}${slot}`, params.agentId));
  }

  static async start(url: string, runs: number, params: { agentId: string; keyPrefix: string }): Promise<RunLoad> {
    const drivers = await Promise.all(Array.from({ length: Math.ceil(runs / RUNS_PER_SOCKET) }, () => RunDriver.open(url)));
    return new RunLoad(drivers, runs, params);
  }

  private async loop(driver: RunDriver, sessionKey: string, agentId: string): Promise<void> {
    while (!this.stopping) {
      const at = performance.now();
      if (await driver.run({ message: "go", sessionKey, agentId })) this.ok++;
      else {
        this.failed++;
        // A refused run answers at once: do not spin on a gateway that refuses everything.
        await sleep(100);
      }
      this.durations.add(performance.now() - at);
    }
  }

  /**
   * Lets every slot finish its run in hand (for at most `graceMs`: a backlogged gateway's runs
   * could take a minute), then closes the sockets; runs cut off count as neither ok nor failed.
   */
  async stop(graceMs = 5_000): Promise<RunLoadSummary> {
    this.stopping = true;
    await Promise.race([Promise.all(this.loops), sleep(graceMs)]);
    for (const d of this.drivers) d.close();
    const { p50, p99 } = this.durations.summary();
    return { runs: this.runs, ok: this.ok, failed: this.failed, runMs: { p50, p99 }, wallMs: Math.round(performance.now() - this.started) };
  }
}

export interface RunLoadConfig {
  url: string;
  runs: number;
  agentId: string;
  keyPrefix: string;
}

/**
 * A `RunLoad` in its own process (bench/clients/run-load.ts): the events of hundreds of streaming
 * runs would otherwise land on the event loop of the process timing the requests measured beside
 * them, and its delay would count as the gateway's latency.
 */
export async function startRunLoad(config: RunLoadConfig): Promise<{ stop(): Promise<RunLoadSummary> }> {
  const proc = spawnBench("clients/run-load.ts", [], { RUN_LOAD_CONFIG: JSON.stringify(config) });
  try {
    await proc.waitLine(/^loading/m);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    async stop() {
      proc.child.kill("SIGTERM");
      try {
        return JSON.parse((await proc.waitLine(/^summary (.+)$/m, 30_000))[1]!) as RunLoadSummary;
      } finally {
        await proc.stop();
      }
    },
  };
}
