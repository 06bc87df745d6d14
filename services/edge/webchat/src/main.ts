/**
 * The web app the edge serves at /chat. Everyone who signs in gets the chat, a `webchat`
 * connection on their own sessions (docs/protocol.md). When the same credential may also connect
 * as `control`, a second connection opens the control view: sessions, runs, channels and
 * approvals. A user whose method does not allow `control` sees the chat only.
 */
import type { GatewayRpcError } from "@gw/client";
import { Chat } from "./chat.js";
import { Control } from "./control.js";
import { Link } from "./link.js";
import { byId, setStatus, showError } from "./view.js";

const SECRET_KEY = "gw.webchat.secret";
const NEEDS_SECRET_KEY = "gw.webchat.needsSecret";

/** A token handed over in the URL (`/chat#token=...`) moves to this tab's storage and out of the URL. */
function takeTokenFromUrl(): void {
  const match = /^#token=(.+)$/.exec(location.hash);
  if (match === null) return;
  sessionStorage.setItem(SECRET_KEY, decodeURIComponent(match[1]!));
  history.replaceState(null, "", location.pathname + location.search);
}

function showLogin(error: string): void {
  byId("app").hidden = true;
  byId("login").hidden = false;
  byId("login-error").textContent = error;
  byId<HTMLInputElement>("secret").focus();
}

const secret = () => sessionStorage.getItem(SECRET_KEY) ?? undefined;
const chat = new Chat();
const control = new Control(secret);

const chatLink = new Link("webchat", secret, {
  async up(client, hello) {
    byId("login").hidden = true;
    byId("app").hidden = false;
    setStatus(`connected (${hello.auth.method})`, "connected");
    await chat.up(client, hello);
    control.start();
  },
  down(retryInMs) {
    chat.down();
    setStatus(`reconnecting in ${Math.round(retryInMs / 1000)} s…`, "error");
  },
  refused(err: GatewayRpcError) {
    const had = secret();
    sessionStorage.removeItem(SECRET_KEY);
    // Every refused connect counts against this address (20 a minute): once the gateway has
    // said it needs a secret, reloads ask for one instead of trying without.
    if (err.code === "UNAUTHORIZED") sessionStorage.setItem(NEEDS_SECRET_KEY, "1");
    setStatus("not connected", "error");
    const why = err.code === "RATE_LIMITED" ? "Too many failed attempts from this address; wait a minute." : err.message;
    showLogin(had === undefined && err.code === "UNAUTHORIZED" ? "" : why);
  },
  event(name, payload) {
    chat.event(name, payload);
  },
});

function connect(): void {
  if (secret() === undefined && sessionStorage.getItem(NEEDS_SECRET_KEY) !== null) {
    setStatus("not connected", "error");
    return showLogin("");
  }
  setStatus("connecting…", "connecting");
  void chatLink.open().catch(showError);
}

byId<HTMLFormElement>("login-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const secretInput = byId<HTMLInputElement>("secret");
  sessionStorage.setItem(SECRET_KEY, secretInput.value);
  secretInput.value = "";
  connect();
});
byId("notice-close").addEventListener("click", () => {
  byId("notice").hidden = true;
});

takeTokenFromUrl();
connect();
