import { runMain, startHost } from "@gw/host";
import { connectRedis } from "@gw/store";
import { SESSIONS_CONFIG_READS } from "./config-reads.js";
import { startIndexFeed } from "./jetstream/index-feed.js";
import { JetStreamSessionRepository } from "./jetstream/jetstream-repository.js";
import { RedisSessionIndex } from "./list-index/redis-session-index.js";
import { startSessionsService } from "./service.js";

runMain("sessions", async () => {
  const host = await startHost({
    service: "sessions",
    argv: process.argv.slice(2),
    env: process.env,
    reads: SESSIONS_CONFIG_READS,
    needs: {},
  });
  const { config, logger } = host;
  const redis = await connectRedis({
    url: config.redis.url,
    nodes: config.redis.nodes,
    onError: (kind, err) => logger.warn({ err, kind }, "session index (Redis) error"),
  });
  const index = new RedisSessionIndex(redis, config.redis.keyPrefix, (problem) =>
    logger.error({ problem }, "a session in the list index does not decode; it is left out of the page"),
  );
  host.shutdown.add("session-index", () => index.close());
  const onIndexError = (err: unknown) => logger.warn({ err }, "session index update failed; the index feed repairs it");
  const repo = await JetStreamSessionRepository.open(host.nc, {
    subjectPrefix: config.nats.subjectPrefix,
    partitions: config.sessions.partitions,
    replicas: config.nats.replicas,
    index,
    onIndexError,
    onWatchError: (err) => logger.warn({ err }, "watch of an owned sessions partition failed; starting it again"),
    onCorruptMeta: (key, problem) => logger.error({ key, problem }, "stored session metadata does not decode; it reads as no session"),
  });
  host.shutdown.add("session-store", () => repo.close());
  const feed = startIndexFeed({ ...repo.feedParts(), index, onError: onIndexError });
  host.shutdown.add("session-index-feed", () => feed.stop());
  const { partitions } = config.sessions;
  const service = startSessionsService({ config, bus: host.bus, subjects: host.subjects, repo, logger, partitions });
  host.shutdown.add("sessions", () => service.stop());
  logger.info({ partitions: config.sessions.partitions }, "sessions serving");
});
