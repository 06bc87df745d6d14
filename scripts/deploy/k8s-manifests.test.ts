import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { type ConfigReader, parseConfig } from "@gw/config";
import { runQueueNames } from "@gw/runs";
import JSON5 from "json5";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import {
  configFromConfigMap,
  distributedServices,
  dockerStages,
  k8sFiles,
  lastInstruction,
  type Manifest,
  readKustomization,
  renderKustomization,
  ROOT,
} from "./deploy-files.js";
import { SERVICE_READS } from "../../services/gateway/src/check-as.js";

/** The kinds these manifests may use, each with the schema model that validates it. */
const MODELS: Record<string, { apiVersion: string; kind: string; validate(obj: unknown): void }> = {};
for (const Model of [Deployment, StatefulSet, HorizontalPodAutoscaler, PodDisruptionBudget, ConfigMap, Service, ScaledObject]) {
  MODELS[`${Model.apiVersion}/${Model.kind}`] = {
    apiVersion: Model.apiVersion,
    kind: Model.kind,
    validate: (obj) => new (Model as unknown as new (data: unknown) => { validate(): void })(obj).validate(),
  };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }>;
  envFrom?: Array<{ secretRef?: { name: string; optional?: boolean }; configMapRef?: { name: string } }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  readinessProbe?: { grpc?: { port: number; service?: string } };
  livenessProbe?: { grpc?: { port: number; service?: string } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}

interface PodSpec {
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; runAsGroup?: number };
  containers: Container[];
  volumes?: Array<{ name: string; configMap?: { name: string }; emptyDir?: object; secret?: { secretName: string } }>;
}

interface DeploymentSpec {
  selector: { matchLabels: Record<string, string> };
  template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
}

const K8S = join(ROOT, "k8s");
const RENDERS = { base: renderKustomization(K8S), keda: renderKustomization(join(K8S, "keda")) };
const ENV_PLACEHOLDER = "placeholder-value";

const ofKind = (objects: Manifest[], kind: string) => objects.filter((o) => o.kind === kind);
const deployments = (objects: Manifest[], kind = "Deployment") =>
  ofKind(objects, kind).map((d) => ({ name: d.metadata.name, file: d.file, spec: d.spec as unknown as DeploymentSpec }));
/** Everything that runs pods: the services' Deployments and the NATS StatefulSet. */
const workloads = (objects: Manifest[]) => [...deployments(objects), ...deployments(objects, "StatefulSet")];
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);

/** The gateway's config file from its ConfigMap. */
function gatewayConfig(objects: Manifest[]) {
  const map = ofKind(objects, "ConfigMap").find((m) => m.metadata.name === "gateway-config")!;
  return configFromConfigMap(map, "gateway.json5", { GATEWAY_TOKEN: ENV_PLACEHOLDER });
}

/** The config file as the service of a Deployment loads it: only the sections it reads take variables. */
function readerOf(service: string): ConfigReader {
  const sections = SERVICE_READS[service];
  if (sections === undefined) throw new Error(`services/${service} declares no config sections (services/gateway/src/check-as.ts)`);
  return { service, sections };
}

/** What an operator puts in the Secrets the README creates (the hooks token too), each value distinct. */
const SECRET_DATA: Record<string, Record<string, string>> = {
  "gateway-secrets": { token: "gw-token-k8s-7f1e", "hooks-token": "hooks-token-k8s-2c9a" },
  "model-secrets": { OPENAI_API_KEY: "sk-model-key-k8s-5d3b" },
  "channel-secrets": { TELEGRAM_BOT_TOKEN: "123456:bot-token-k8s-8e4f", TELEGRAM_WEBHOOK_SECRET: "tg-secret-k8s-1a6c" },
};

/** A container's environment with SECRET_DATA in the Secrets it names (`env` over `envFrom`, as the kubelet does). */
function containerEnv(c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) if (from.secretRef) Object.assign(env, SECRET_DATA[from.secretRef.name]);
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    const value = ref ? SECRET_DATA[ref.name]?.[ref.key] : e.value;
    if (value !== undefined) env[e.name] = value;
  }
  return env;
}

/** The shipped config plus what the README has an operator add: hooks, a model provider, a Telegram channel. */
function configWithSecrets(objects: Manifest[]): string {
  const map = ofKind(objects, "ConfigMap").find((m) => m.metadata.name === "gateway-config")!;
  return JSON.stringify({
    ...(JSON5.parse(map.data!["gateway.json5"]!) as object),
    hooks: { enabled: true, token: "${HOOKS_TOKEN}" },
    agents: { list: [{ id: "main", name: "Main", model: "openai/gpt-4o-mini" }] },
    models: { providers: { openai: { kind: "openai", baseUrl: "https://api.openai.com/v1", apiKey: "${OPENAI_API_KEY}" } } },
    channels: {
      default: "telegram",
      telegram: { kind: "telegram", botToken: "${TELEGRAM_BOT_TOKEN}", webhookSecret: "${TELEGRAM_WEBHOOK_SECRET}" },
    },
  });
}

/** Secrets an operator creates by hand: the README's `kubectl create secret generic <name>` lines. */
function documentedSecrets(): Set<string> {
  const readme = readFileSync(join(K8S, "README.md"), "utf8");
  return new Set([...readme.matchAll(/kubectl create secret generic ([a-z0-9-]+)/g)].map((m) => m[1]!));
}

/** The uid:gid the image runs as (the Dockerfile's USER for the runtime stage every service image builds on). */
function imageUser(): { uid: number; gid: number } {
  const user = lastInstruction(dockerStages(), "runtime", "USER") ?? "";
  const [, uid, gid] = /^(\d+):(\d+)$/.exec(user) ?? [];
  if (uid === undefined || gid === undefined) throw new Error(`Dockerfile USER "${user}" is not numeric uid:gid`);
  return { uid: Number(uid), gid: Number(gid) };
}

describe("k8s manifests", () => {
  it("are all part of a kustomization, and every resource a kustomization names exists", () => {
    const listed = new Set<string>();
    for (const dir of [K8S, join(K8S, "keda")]) {
      const k = readKustomization(dir);
      for (const resource of k.resources) listed.add(join(dir, resource).slice(ROOT.length));
    }
    const files = k8sFiles().filter((file) => !file.endsWith("kustomization.yaml"));
    expect(files.filter((file) => !listed.has(file))).toEqual([]);
  });

  for (const [render, objects] of Object.entries(RENDERS)) {
    it(`(${render}) validate against the Kubernetes and KEDA schemas`, () => {
      expect(objects.length).toBeGreaterThan(0);
      for (const object of objects) {
        const model = MODELS[`${object.apiVersion}/${object.kind}`];
        if (!model) throw new Error(`${object.file}: no schema for ${object.apiVersion} ${object.kind}`);
        const { file: _file, ...body } = object;
        expect(() => model.validate(body), `${object.file} ${object.kind}/${object.metadata.name}`).not.toThrow();
      }
    });

    it(`(${render}) name each object once per kind`, () => {
      const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
      expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    });
  }

  it("run every distributed service as a Deployment of its own bundle, with a PodDisruptionBudget", () => {
    const objects = RENDERS.base;
    for (const service of distributedServices()) {
      const deployment = deployments(objects).find((d) => d.name === service);
      expect(deployment, `a Deployment for services/${service} (see k8s/kustomization.yaml)`).toBeDefined();
      const [container] = deployment!.spec.template.spec.containers;
      expect(container!.command).toEqual(["node", `dist/${service}.js`]);
      const pdbs = ofKind(objects, "PodDisruptionBudget").filter((p) =>
        matches((p.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, deployment!.spec.template.metadata.labels),
      );
      expect(pdbs.map((p) => p.metadata.name)).toEqual([service]);
    }
    const known = new Set(distributedServices());
    expect(deployments(objects).map((d) => d.name).filter((name) => !known.has(name))).toEqual([]);
  });

  it("select their pods: Deployment selectors, Services, PodDisruptionBudgets and their ports", () => {
    const objects = RENDERS.base;
    const pods = workloads(objects).map((d) => ({ ...d, labels: d.spec.template.metadata.labels }));
    for (const d of pods) expect(matches(d.spec.selector.matchLabels, d.labels), `${d.name} selector`).toBe(true);
    for (const selecting of [...ofKind(objects, "PodDisruptionBudget"), ...ofKind(objects, "Service")]) {
      const spec = selecting.spec as { selector: Record<string, string> & { matchLabels?: Record<string, string> } };
      const selector = spec.selector.matchLabels ?? spec.selector;
      const targets = pods.filter((d) => matches(selector, d.labels));
      expect(targets.length, `${selecting.kind}/${selecting.metadata.name} selects one workload's pods`).toBe(1);
      if (selecting.kind !== "Service") continue;
      const containerPorts = targets[0]!.spec.template.spec.containers.flatMap((c) => c.ports ?? []);
      for (const port of (selecting.spec as { ports: Array<{ targetPort: string | number }> }).ports) {
        const found = containerPorts.some((p) => p.name === port.targetPort || p.containerPort === port.targetPort);
        expect(found, `Service ${selecting.metadata.name} targetPort ${port.targetPort}`).toBe(true);
      }
    }
  });

  it("autoscale every Deployment they name, each with exactly one autoscaler", () => {
    for (const [render, objects] of Object.entries(RENDERS)) {
      const targets = [...ofKind(objects, "HorizontalPodAutoscaler"), ...ofKind(objects, "ScaledObject")].map(
        (o) => (o.spec as { scaleTargetRef: { kind?: string; name: string } }).scaleTargetRef,
      );
      for (const target of targets) {
        expect(target.kind ?? "Deployment").toBe("Deployment");
        expect(deployments(objects).map((d) => d.name), `${render}: ${target.name}`).toContain(target.name);
      }
      const names = targets.map((t) => t.name);
      expect(names.filter((name, i) => names.indexOf(name) !== i), `${render}: two autoscalers on one Deployment`).toEqual([]);
      expect(names.sort(), render).toEqual(["agent-runner", "edge"]);
    }
    expect(ofKind(RENDERS.keda, "ScaledObject").map((o) => o.metadata.name)).toEqual(["agent-runner"]);
  });

  it("scale the runners on the run queue that the runners consume (KEDA nats-jetstream trigger)", () => {
    const config = gatewayConfig(RENDERS.keda);
    const scaled = ofKind(RENDERS.keda, "ScaledObject")[0]!;
    const triggers = (scaled.spec as { triggers: Array<{ type: string; metadata: Record<string, string> }> }).triggers;
    const jetstream = triggers.find((t) => t.type === "nats-jetstream");
    expect(jetstream).toBeDefined();
    const names = runQueueNames(config.nats.subjectPrefix);
    expect(jetstream!.metadata).toMatchObject({ stream: names.stream, consumer: names.consumer });
    expect(jetstream!.metadata.natsServerMonitoringEndpoint).toMatch(/^[a-z0-9.-]+\.svc(\.[a-z.]+)?:8222$/);
    expect(Number(jetstream!.metadata.lagThreshold)).toBeGreaterThan(0);
    // The CPU trigger keeps scaling when the NATS monitoring endpoint cannot be read.
    expect(triggers.map((t) => t.type)).toContain("cpu");
  });

  it("probe gRPC health natively on the configured port, readiness per service and liveness apart", () => {
    const objects = RENDERS.base;
    const config = gatewayConfig(objects);
    expect(config.ops.healthPort).toBeDefined();
    expect(config.ops.metricsPort).toBeDefined();
    for (const d of deployments(objects)) {
      for (const c of d.spec.template.spec.containers) {
        const ports = new Map((c.ports ?? []).map((p) => [p.name, p.containerPort]));
        expect(ports.get("grpc-health"), `${d.name} grpc-health port`).toBe(config.ops.healthPort);
        expect(ports.get("metrics"), `${d.name} metrics port`).toBe(config.ops.metricsPort);
        expect(c.readinessProbe?.grpc, `${d.name} readiness`).toEqual({ port: config.ops.healthPort, service: d.name });
        expect(c.livenessProbe?.grpc, `${d.name} liveness`).toEqual({ port: config.ops.healthPort, service: "liveness" });
      }
      expect(d.spec.template.metadata.annotations?.["prometheus.io/port"]).toBe(String(config.ops.metricsPort));
    }
  });

  it("reference only ConfigMaps they define, config files those hold, and Secrets the README creates", () => {
    const objects = RENDERS.base;
    const configMaps = new Map(ofKind(objects, "ConfigMap").map((m) => [m.metadata.name, m]));
    const secrets = documentedSecrets();
    for (const d of deployments(objects)) {
      const pod = d.spec.template.spec;
      for (const volume of pod.volumes ?? []) {
        if (volume.configMap) expect(configMaps.has(volume.configMap.name), `${d.name} volume ${volume.name}`).toBe(true);
        if (volume.secret) expect(secrets.has(volume.secret.secretName), `${d.name} volume ${volume.name}`).toBe(true);
      }
      for (const c of pod.containers) {
        const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? ENV_PLACEHOLDER]));
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (ref && !ref.optional) expect(secrets.has(ref.name), `${d.name} env ${e.name} secret ${ref.name}`).toBe(true);
        }
        for (const from of c.envFrom ?? []) {
          if (from.secretRef && !from.secretRef.optional) expect(secrets.has(from.secretRef.name)).toBe(true);
          if (from.configMapRef) expect(configMaps.has(from.configMapRef.name)).toBe(true);
        }
        // GATEWAY_CONFIG names a file in a mounted ConfigMap, and that file is a valid config
        // with every ${VAR} it uses set in this container's environment.
        const path = env.GATEWAY_CONFIG;
        expect(path, `${d.name} GATEWAY_CONFIG`).toBeDefined();
        const mount = (c.volumeMounts ?? []).find((m) => path!.startsWith(`${m.mountPath}/`));
        const volume = pod.volumes?.find((v) => v.name === mount?.name);
        expect(volume?.configMap, `${d.name}: ${path} is in a mounted ConfigMap`).toBeDefined();
        const map = configMaps.get(volume!.configMap!.name)!;
        expect(() => configFromConfigMap(map, path!.slice(mount!.mountPath.length + 1), env, readerOf(d.name))).not.toThrow();
      }
    }
  });

  it("give each service the secrets of the config sections it reads, and its config loads with only those", () => {
    const objects = RENDERS.base;
    const text = configWithSecrets(objects);
    expect(Object.keys(SERVICE_READS).sort()).toEqual(distributedServices());
    const documented = documentedSecrets();
    for (const name of Object.keys(SECRET_DATA)) expect(documented.has(name), `README creates ${name}`).toBe(true);
    // Which Secret values end up in each service's config (DESIGN §9: platform secrets only in delivery).
    const held: Record<string, string[]> = {};
    for (const d of deployments(objects)) {
      const [container] = d.spec.template.spec.containers;
      const env = containerEnv(container!);
      const view = JSON.stringify(parseConfig(text, { env, reader: readerOf(d.name), source: `${d.name}'s pod` }));
      held[d.name] = Object.entries(SECRET_DATA).flatMap(([secret, data]) =>
        Object.entries(data).flatMap(([key, value]) => (view.includes(value) ? [`${secret}/${key}`] : [])),
      );
      // Every reference substituted, as the embedded gateway does: only delivery has a channel's.
      if (d.name !== "delivery") expect(() => parseConfig(text, { env })).toThrow(/TELEGRAM_BOT_TOKEN is not set/);
    }
    expect(held).toEqual({
      edge: ["gateway-secrets/token", "gateway-secrets/hooks-token"],
      sessions: ["gateway-secrets/token"],
      "agent-runner": ["gateway-secrets/token", "model-secrets/OPENAI_API_KEY"],
      delivery: ["gateway-secrets/token", "channel-secrets/TELEGRAM_BOT_TOKEN", "channel-secrets/TELEGRAM_WEBHOOK_SECRET"],
      hooks: ["gateway-secrets/token", "gateway-secrets/hooks-token"],
    });
  });

  it("run as the image's numeric non-root user, without privileges, and stop after the drain deadline", () => {
    const objects = RENDERS.base;
    const config = gatewayConfig(objects);
    const { uid, gid } = imageUser();
    expect(uid).toBeGreaterThan(0);
    const images = new Set((readKustomization(K8S).images ?? []).map((i) => i.name));
    for (const d of deployments(objects)) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext, d.name).toMatchObject({ runAsNonRoot: true, runAsUser: uid, runAsGroup: gid });
      for (const c of pod.containers) {
        expect(images.has(c.image), `${d.name} image ${c.image} is set in kustomization images`).toBe(true);
        expect(c.securityContext, d.name).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
        expect(c.securityContext?.capabilities?.drop).toContain("ALL");
        // A read-only root needs a writable /tmp.
        const tmp = c.volumeMounts?.find((m) => m.mountPath === "/tmp");
        expect(pod.volumes?.find((v) => v.name === tmp?.name)?.emptyDir, `${d.name} /tmp`).toBeDefined();
        // SIGTERM comes after preStop; the drain then has ops.shutdownTimeoutMs, and the grace
        // period must cover both with room for the exit itself.
        const preStop = c.lifecycle?.preStop?.exec?.command;
        const preStopMs = preStop?.[0] === "sleep" ? Number(preStop[1]) * 1000 : 0;
        const graceMs = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
        expect(graceMs, `${d.name} terminationGracePeriodSeconds`).toBeGreaterThanOrEqual(
          preStopMs + config.ops.shutdownTimeoutMs + 5_000,
        );
      }
    }
  });

  it("run a NATS cluster with JetStream on every node, as many nodes as the streams have replicas", () => {
    const objects = RENDERS.base;
    const config = gatewayConfig(objects);
    const [nats] = deployments(objects, "StatefulSet").filter((d) => d.name === "nats");
    expect(nats, "a StatefulSet nats").toBeDefined();
    const spec = nats!.spec as DeploymentSpec & { replicas: number; serviceName: string; volumeClaimTemplates: Array<{ metadata: { name: string } }> };
    // R3 needs three nodes; an odd count keeps a majority when one is away.
    expect(config.nats.replicas).toBe(3);
    expect(spec.replicas).toBeGreaterThanOrEqual(config.nats.replicas);
    expect(spec.replicas % 2).toBe(1);
    const [container] = spec.template.spec.containers;
    const ports = new Map((container!.ports ?? []).map((p) => [p.name, p.containerPort]));
    // The gateway's URL reaches the client port through the client Service.
    const url = new URL(config.nats.url);
    const client = ofKind(objects, "Service").find((svc) => svc.metadata.name === url.hostname)!;
    expect((client.spec as { ports: Array<{ port: number; targetPort: string }> }).ports).toContainEqual(
      expect.objectContaining({ port: Number(url.port), targetPort: "client" }),
    );
    // Every pod is a route, by its stable name under the headless Service, on the cluster port.
    const conf = ofKind(objects, "ConfigMap").find((m) => m.metadata.name === "nats-config")!.data as { "nats.conf": string };
    const text = conf["nats.conf"];
    const headless = ofKind(objects, "Service").find((svc) => svc.metadata.name === spec.serviceName)!;
    expect((headless.spec as { clusterIP?: string; publishNotReadyAddresses?: boolean })).toMatchObject({ clusterIP: "None", publishNotReadyAddresses: true });
    const routes = [...text.matchAll(/nats:\/\/([a-z0-9-]+)\.([a-z0-9-]+):(\d+)/g)].map((m) => ({ pod: m[1], svc: m[2], port: Number(m[3]) }));
    expect(routes).toEqual(Array.from({ length: spec.replicas }, (_, i) => ({ pod: `nats-${i}`, svc: spec.serviceName, port: ports.get("cluster") })));
    expect(text).toMatch(new RegExp(`cluster \\{[^}]*port: ${ports.get("cluster")}`));
    expect(text).toMatch(new RegExp(`^port: ${ports.get("client")}$`, "m"));
    expect(text).toMatch(new RegExp(`^http_port: ${ports.get("monitor")}$`, "m"));
    // JetStream stores on the pod's own volume, and every node names itself (JetStream needs it).
    const storeDir = /store_dir: (\S+)/.exec(text)?.[1];
    const mount = container!.volumeMounts?.find((m) => m.mountPath === storeDir);
    expect(spec.volumeClaimTemplates.map((v) => v.metadata.name)).toContain(mount?.name);
    expect(text).toMatch(/server_name: \$POD_NAME/);
    // Large enough for the edge's largest frame, which travels on the bus with an envelope.
    const maxPayload = /max_payload: (\d+)MB/.exec(text)?.[1];
    expect(Number(maxPayload) * 1_048_576).toBeGreaterThan(config.gateway.limits.maxFrameBytes);
    const pdb = ofKind(objects, "PodDisruptionBudget").find((p) => p.metadata.name === "nats")!;
    expect(pdb.spec).toMatchObject({ maxUnavailable: 1 });
  });
});
