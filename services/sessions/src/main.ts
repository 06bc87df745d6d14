import { runMain, startHost } from "@gw/host";
import { JetStreamSessionRepository } from "./jetstream/jetstream-repository.js";
import { startSessionsService } from "./service.js";

runMain("sessions", async () => {
  const host = await startHost({
    service: "sessions",
    argv: process.argv.slice(2),
    env: process.env,
    needs: {},
  });
  const repo = await JetStreamSessionRepository.open(host.nc, { subjectPrefix: host.config.nats.subjectPrefix });
  host.shutdown.add("session-store", () => repo.close());
  const service = startSessionsService({
    config: host.config,
    bus: host.bus,
    subjects: host.subjects,
    repo,
    logger: host.logger,
  });
  host.shutdown.add("sessions", () => service.stop());
  host.logger.info("sessions serving");
});
