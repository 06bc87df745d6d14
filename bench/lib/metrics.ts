/**
 * A process's own event-loop delay p99 since the previous scrape (libs/runtime's monitor,
 * `gw_event_loop_delay_seconds`, reset by every scrape), in ms; NaN without a metrics port.
 */
export async function eventLoopP99(metricsPort: number | undefined): Promise<number> {
  if (metricsPort === undefined) return Number.NaN;
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const match = /gw_event_loop_delay_seconds\{[^}]*quantile="0\.99"[^}]*\} ([0-9.e+-]+)/.exec(text);
  return match ? Number(match[1]) * 1000 : Number.NaN;
}
