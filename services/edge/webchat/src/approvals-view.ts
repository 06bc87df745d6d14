/**
 * Approvals: devices waiting to be paired and people waiting to talk to a bot, each approved or
 * rejected with one click and arriving live; and the paired devices, whose tokens can be rotated
 * and which can be revoked.
 */
import type { ConnectAnswer, GatewayClient } from "@gw/client";
import type { ControlView } from "./control.js";
import { button, byId, confirmInline, el, replaceKeepingFocus, showError, when } from "./view.js";

/** While the tab is open and the gateway announces no sender requests, the list is read this often. */
const SENDER_POLL_MS = 3_000;




function section(title: string, list: HTMLElement): HTMLElement {
  const box = el("section", "card");
  box.append(el("h2", undefined, title), list);
  list.setAttribute("aria-label", title);
  return box;
}

export class ApprovalsView implements ControlView {
  private readonly root = byId("view-approvals");
  private readonly pairings = el("ul", "rows pairings");
  private readonly senders = el("ul", "rows senders");
  private readonly devices = el("ul", "rows devices");
  private client: GatewayClient | undefined;
  private canReject = false;
  private senderEvents = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Tokens rotated from this page, shown until the page is left: the gateway keeps only their hash. */
  private readonly newTokens = new Map<string, string>();

  constructor() {
    this.root.append(section("Devices waiting to be paired", this.pairings), section("People waiting to talk to a bot", this.senders), section("Paired devices", this.devices));
  }

  async up(client: GatewayClient, hello: ConnectAnswer): Promise<void> {
    this.client = client;
    this.canReject = hello.methods.includes("channels.pairing.reject");
    await Promise.all([this.loadPairings(), this.loadSenders(), this.loadDevices()]);
  }

  down(): void {
    this.client = undefined;
  }

  event(name: string): void {
    if (name === "node.pair.requested" || name === "node.pair.resolved") void this.loadPairings().catch(showError);
    if (name === "node.pair.resolved" || name === "device.token.rotated" || name === "device.revoked") void this.loadDevices().catch(showError);
    if (name.startsWith("channels.pairing.")) {
      this.senderEvents = true;
      void this.loadSenders().catch(showError);
    }
  }

  shown(): void {
    void this.loadSenders().catch(showError);
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      if (this.root.hidden || this.senderEvents) return clearInterval(this.timer);
      void this.loadSenders().catch(() => undefined);
    }, SENDER_POLL_MS);
  }

  private need(): GatewayClient {
    if (this.client === undefined) throw new Error("The control connection is down; it reconnects by itself.");
    return this.client;
  }

  private async loadPairings(): Promise<void> {
    if (this.client === undefined) return;
    const { requests } = await this.client.request("node.pair.list");
    const items = requests.map((r) => {
      const item = el("li");
      item.dataset.requestId = r.requestId;
      const text = el("div");
      const facts = `${r.deviceId} · from ${r.clientIp}${r.keyFingerprint ? ` · key ${r.keyFingerprint}` : ""} · expires ${when(r.expiresAt)}`;
      text.append(el("span", "key", r.name || r.deviceId), el("span", "muted", facts));
      const approve = button("Approve", () => this.resolve("node.pair.approve", r.requestId), { title: `Approve device ${r.name || r.deviceId}` });
      approve.dataset.focus = `approve:${r.requestId}`;
      const reject = button("Reject", () => this.resolve("node.pair.reject", r.requestId), { className: "danger", title: `Reject device ${r.name || r.deviceId}` });
      reject.dataset.focus = `reject:${r.requestId}`;
      item.append(text, approve, reject);
      return item;
    });
    replaceKeepingFocus(this.pairings, items.length > 0 ? items : [el("li", "muted", "No device is waiting.")]);
  }

  private async resolve(method: "node.pair.approve" | "node.pair.reject", requestId: string): Promise<void> {
    await this.need().request(method, { requestId });
    await this.loadPairings();
  }

  private async loadSenders(): Promise<void> {
    if (this.client === undefined) return;
    const { requests } = await this.client.request("channels.pairing.list");
    const items = requests.map((r) => {
      const item = el("li");
      item.dataset.code = r.code;
      const who = r.senderName ? `${r.senderName} (${r.sender})` : r.sender;
      const text = el("div");
      text.append(el("span", "key", who), el("span", "muted", `${r.channel}/${r.accountId} · code ${r.code} · expires ${when(r.expiresAt)}`));
      const params = { channel: r.channel, code: r.code, accountId: r.accountId };
      const approve = button("Approve", () => this.answerSender("channels.pairing.approve", params), { title: `Approve ${who} on ${r.channel}` });
      approve.dataset.focus = `approve:${r.channel}:${r.code}`;
      item.append(text, approve);
      if (this.canReject) {
        const reject = button("Reject", () => this.answerSender("channels.pairing.reject", params), { className: "danger", title: `Reject ${who} on ${r.channel}` });
        reject.dataset.focus = `reject:${r.channel}:${r.code}`;
        item.append(reject);
      }
      return item;
    });
    replaceKeepingFocus(this.senders, items.length > 0 ? items : [el("li", "muted", "Nobody is waiting.")]);
  }

  private async answerSender(method: "channels.pairing.approve" | "channels.pairing.reject", params: Record<string, string>): Promise<void> {
    await this.need().request(method, params);
    await this.loadSenders();
  }

  private async loadDevices(): Promise<void> {
    if (this.client === undefined) return;
    const { devices } = await this.client.request("device.list");
    const items = devices.map((d) => {
      const item = el("li");
      item.dataset.deviceId = d.deviceId;
      const text = el("div");
      text.append(el("span", "key", d.name || d.deviceId), el("span", "muted", `${d.deviceId} · paired ${when(d.pairedAt)} from ${d.pairedFrom} · token from ${when(d.rotatedAt)}`));
      const rotate = button("Rotate token", () => this.rotate(d.deviceId), { title: `Rotate the token of ${d.name || d.deviceId}` });
      rotate.dataset.focus = `rotate:${d.deviceId}`;
      const revoke: HTMLButtonElement = button(
        "Revoke",
        () =>
          confirmInline(revoke, `Revoke ${d.name || d.deviceId}? Its token stops working at once.`, "Revoke", async () => {
            await this.need().request("device.revoke", { deviceId: d.deviceId });
            await this.loadDevices();
          }),
        { className: "danger", title: `Revoke ${d.name || d.deviceId}` },
      );
      revoke.dataset.focus = `revoke:${d.deviceId}`;
      item.append(text, rotate, revoke);
      const token = this.newTokens.get(d.deviceId);
      if (token !== undefined) item.append(this.tokenBox(d.deviceId, token));
      return item;
    });
    replaceKeepingFocus(this.devices, items.length > 0 ? items : [el("li", "muted", "No device is paired.")]);
  }

  private async rotate(deviceId: string): Promise<void> {
    const { token } = await this.need().request("device.token.rotate", { deviceId });
    this.newTokens.set(deviceId, token);
    await this.loadDevices();
    this.devices.querySelector<HTMLInputElement>(`[data-device-id="${CSS.escape(deviceId)}"] .new-token input`)?.select();
  }

  private tokenBox(deviceId: string, token: string): HTMLElement {
    const box = el("div", "new-token");
    const field = el("input");
    field.readOnly = true;
    field.value = token;
    field.setAttribute("aria-label", `New token of ${deviceId}`);
    box.append(el("span", undefined, "New token, for the device (shown only here):"), field);
    return box;
  }
}
