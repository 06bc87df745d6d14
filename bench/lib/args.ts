/** Flags shared by `npm run bench` and `npm run fuzz`. */
export interface BenchArgs {
  /** Short durations and small counts: proves the harness works, numbers mean little. */
  quick: boolean;
  /** Run only the suites whose name contains one of these. */
  only: string[];
  /** Idle connections to hold (capped by the open-file limit). */
  connections: number;
  /** Seconds of each throughput measurement (split over the rounds). */
  seconds: number;
  /** How many times a baseline and its subjects are measured in turn (bench/lib/rounds.ts). */
  rounds: number;
  /** How long the soak runs (`--soak-seconds`; default 600, 30 with --quick). */
  soakSeconds: number;
  /**
   * Run the gateway's TypeScript source through tsx (`--source`) instead of the compiled build
   * production runs (the default: `scripts/build-services.mjs` before the first suite).
   */
  source: boolean;
}

function valueOf(argv: string[], flag: string): string | undefined {
  const index = argv.indexOf(flag);
  return index === -1 ? undefined : argv[index + 1];
}

export function parseBenchArgs(argv: string[]): BenchArgs {
  const quick = argv.includes("--quick");
  const only = valueOf(argv, "--only");
  return {
    quick,
    only: only ? only.split(",") : [],
    connections: Number(valueOf(argv, "--connections") ?? (quick ? 2_000 : 20_000)),
    seconds: Number(valueOf(argv, "--seconds") ?? (quick ? 1 : 5)),
    rounds: Math.max(1, Number(valueOf(argv, "--rounds") ?? (quick ? 1 : 3))),
    soakSeconds: Math.max(10, Number(valueOf(argv, "--soak-seconds") ?? (quick ? 30 : 600))),
    source: argv.includes("--source"),
  };
}
