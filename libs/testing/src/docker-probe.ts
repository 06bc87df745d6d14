/**
 * True when testcontainers can reach a container runtime. Imported lazily so that machines
 * with the binaries installed never load testcontainers at all.
 */
export async function dockerAvailable(timeoutMs = 5_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
    timer.unref();
  });
  const probe = (async () => {
    try {
      const { getContainerRuntimeClient } = await import("testcontainers");
      await getContainerRuntimeClient();
      return true;
    } catch {
      return false;
    }
  })();
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
