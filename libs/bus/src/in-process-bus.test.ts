import { InProcessBus } from "./index.js";
import { describeBusContract } from "./bus.contract.js";

describeBusContract("in-process", async () => {
  const handlerErrors: unknown[] = [];
  const bus = new InProcessBus((err) => handlerErrors.push(err));
  return { a: bus, b: bus, handlerErrors, cleanup: () => bus.close() };
});
