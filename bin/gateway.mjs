#!/usr/bin/env node
// `npx gateway …` (and `npm start`) from a checkout: the CLI's TypeScript through tsx's loader,
// in this one process, so a signal sent to it reaches the gateway itself and leaves no child
// behind. The container image runs the compiled dist/gateway.js instead.
import { register } from "tsx/esm/api";

register();
await import("../services/gateway/src/cli.ts");
