import { createMemoryFastStore } from "@gw/store";
import { describeRunRegistryContract, TEST_REGISTRY_OPTIONS } from "./run-registry.contract.js";
import { RunRegistry } from "./run-registry.js";

describeRunRegistryContract("memory", async () => {
  // A moved clock instead of sleeping: expiry is checked on every read.
  let now = Date.now();
  const store = createMemoryFastStore({ now: () => now });
  return {
    a: new RunRegistry(store, TEST_REGISTRY_OPTIONS),
    b: new RunRegistry(store, TEST_REGISTRY_OPTIONS),
    async elapse(ms) {
      now += ms;
    },
    dispose: () => store.close(),
  };
});
