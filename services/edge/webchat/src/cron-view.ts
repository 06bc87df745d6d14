/**
 * Scheduled runs: `cron.list` (each job's schedule, next firing and last run's result), read
 * again every few seconds while the tab is open, with a button that runs a job now (`cron.run`).
 * Jobs are added and changed in the config file, with `gateway cron add`, or `cron.*` calls.
 */
import { type GatewayClient, GatewayRpcError } from "@gw/client";
import type { CronJobView } from "@gw/contracts";
import { PolledView } from "./polled-view.js";
import { button, byId, el, when } from "./view.js";

const REFRESH_MS = 5_000;

export class CronView extends PolledView {
  private readonly list = el("ul", "cron-jobs");

  constructor() {
    super(byId("view-cron"), REFRESH_MS);
    const toolbar = el("div", "toolbar");
    toolbar.append(button("Refresh", () => this.load()));
    this.list.setAttribute("aria-label", "Scheduled jobs");
    this.root.append(toolbar, this.list);
  }

  protected async load(): Promise<void> {
    if (this.client === undefined) return;
    let answer;
    try {
      answer = await this.client.request("cron.list");
    } catch (err) {
      // No hooks service in this deployment: a fact of the view, not an error of the page.
      if (!(err instanceof GatewayRpcError) || err.code !== "UNAVAILABLE") throw err;
      this.list.replaceChildren(el("li", "muted", "Scheduled runs are not available: no hooks service answers."));
      return;
    }
    if (answer.jobs.length === 0) {
      this.list.replaceChildren(el("li", "muted", "No scheduled jobs (cron.jobs in the config, or gateway cron add)."));
      return;
    }
    this.list.replaceChildren(...answer.jobs.map((job) => this.row(job)));
  }

  private row(job: CronJobView): HTMLElement {
    const item = el("li", "cron-job");
    item.dataset.job = job.id;
    const schedule = `${job.schedule}${job.timezone ? ` (${job.timezone})` : ""}`;
    const next = job.enabled ? (job.nextFireAt === undefined ? "no next firing" : `next ${when(job.nextFireAt)}`) : "disabled";
    const last = job.lastResult === undefined ? "never run" : `last ${job.lastResult} ${when(job.lastFiredAt)}${job.lastError ? `: ${job.lastError}` : ""}`;
    const facts = el("span", "muted", `${schedule} · ${job.agentId} → ${job.sessionKey} · ${job.source}`);
    const nextLine = el("span", "next", next);
    const lastLine = el("span", job.lastResult === "error" ? "bad" : "muted", last);
    const run = button("Run now", async () => {
      await this.need().request("cron.run", { id: job.id });
      await this.load();
    });
    item.append(el("strong", undefined, job.id), facts, nextLine, lastLine, run);
    return item;
  }

  private need(): GatewayClient {
    if (this.client === undefined) throw new Error("The control connection is down; it reconnects by itself.");
    return this.client;
  }
}
