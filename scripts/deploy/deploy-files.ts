// Reads the deployment files (Dockerfile, docker-compose.yml, k8s/) and the facts about the
// services they must agree with, for the deploy tests beside this file.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type ConfigReader, type GatewayConfig, parseConfig } from "@gw/config";
import { parseAllDocuments } from "yaml";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A parsed Kubernetes object and the file it came from. */
export interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  [key: string]: unknown;
}

/** Every distributed service: a `services/<name>/src/main.ts` (the embedded `gateway` has a CLI instead). */
export function distributedServices(): string[] {
  return readdirSync(join(ROOT, "services"))
    .filter((name) => existsSync(join(ROOT, "services", name, "src", "main.ts")))
    .sort();
}

/** The servers a service's main.ts connects to at start: NATS always, Redis when it asks startHost for a FastStore. */
export function serverDependencies(service: string): string[] {
  const main = readFileSync(join(ROOT, "services", service, "src", "main.ts"), "utf8");
  if (!main.includes("startHost(")) throw new Error(`services/${service}/src/main.ts does not call startHost`);
  // Redis through the host's FastStore, or a client of the service's own (the sessions list index).
  return /fastStore:\s*true|connectRedis\(/.test(main) ? ["nats", "redis"] : ["nats"];
}

export function readYamlDocuments(path: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(path, "utf8"));
  return docs.map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${relative(ROOT, path)}: ${doc.errors[0]!.message}`);
    return doc.toJS() as unknown;
  });
}

/** A kustomization and the paths its `resources` name (files, or directories of further kustomizations). */
export interface Kustomization {
  dir: string;
  resources: string[];
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  patches?: Array<{ patch?: string; path?: string }>;
}

export function readKustomization(dir: string): Kustomization {
  const [doc] = readYamlDocuments(join(dir, "kustomization.yaml")) as Array<Omit<Kustomization, "dir">>;
  if (!doc || !Array.isArray(doc.resources)) throw new Error(`${relative(ROOT, dir)}/kustomization.yaml has no resources`);
  return { dir, ...doc };
}

/**
 * The objects `kubectl apply -k <dir>` would create, with resources of nested kustomizations
 * first and `$patch: delete` patches applied (the only kind of patch these manifests use).
 */
export function renderKustomization(dir: string): Manifest[] {
  const k = readKustomization(dir);
  const objects: Manifest[] = [];
  for (const resource of k.resources) {
    const path = join(dir, resource);
    if (existsSync(join(path, "kustomization.yaml"))) objects.push(...renderKustomization(path));
    else
      for (const doc of readYamlDocuments(path)) {
        if (doc !== null) objects.push({ ...(doc as Manifest), file: relative(ROOT, path) });
      }
  }
  for (const { patch } of k.patches ?? []) {
    const [target] = readYamlDocumentsFromText(patch ?? "") as Array<Manifest & { $patch?: string }>;
    if (target?.$patch !== "delete") throw new Error(`${relative(ROOT, dir)}: only "$patch: delete" patches are understood`);
    const index = objects.findIndex((o) => o.kind === target.kind && o.metadata.name === target.metadata.name);
    if (index < 0) throw new Error(`${relative(ROOT, dir)}: patch deletes ${target.kind}/${target.metadata.name}, which no resource defines`);
    objects.splice(index, 1);
  }
  return objects;
}

function readYamlDocumentsFromText(text: string): unknown[] {
  return parseAllDocuments(text).map((doc) => doc.toJS() as unknown);
}

/** Every .yaml file under k8s/, relative to the repository root. */
export function k8sFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith(".yaml") ? [join(dir, entry.name)] : [],
    );
  return walk(join(ROOT, "k8s")).map((path) => relative(ROOT, path));
}

/** The config file a ConfigMap carries under `key`, parsed by the gateway's own schema (as `reader` loads it). */
export function configFromConfigMap(map: Manifest, key: string, env: Record<string, string>, reader?: ConfigReader): GatewayConfig {
  const text = map.data?.[key];
  if (text === undefined) throw new Error(`ConfigMap ${map.metadata.name} has no key ${key}`);
  return parseConfig(text, { env, reader, source: `${map.file} (${key})` });
}

/** A Dockerfile stage: its name, base, and the instructions in it. */
export interface DockerStage {
  name: string;
  from: string;
  instructions: Array<{ op: string; args: string }>;
}

/** The Dockerfile's stages; continuation lines are joined, comments dropped. */
export function dockerStages(path = join(ROOT, "Dockerfile")): DockerStage[] {
  const text = readFileSync(path, "utf8").replace(/\\\r?\n/g, " ");
  const stages: DockerStage[] = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const [, op = "", args = ""] = /^(\S+)\s*(.*)$/.exec(trimmed) ?? [];
    if (op.toUpperCase() === "FROM") {
      const [, from = "", name = ""] = /^(\S+)(?:\s+AS\s+(\S+))?/i.exec(args) ?? [];
      stages.push({ name, from, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`${path}: ${op} before the first FROM`);
      stage.instructions.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

/** An instruction's value as the final image of `target` sees it: its own stage, then the stages it is built FROM. */
export function lastInstruction(stages: DockerStage[], target: string, op: string): string | undefined {
  const stage = stages.find((s) => s.name === target);
  if (!stage) return undefined;
  const own = stage.instructions.filter((i) => i.op === op).at(-1);
  return own?.args ?? lastInstruction(stages, stage.from, op);
}
