// node bench/heap-diff.mjs <first.heapsnapshot> <second.heapsnapshot> [top]
// Sums self sizes by constructor (node name for objects, type for the rest) in each snapshot,
// prints the groups that grew most, and for objects of the second snapshot that were allocated
// after the first (ids above the first's highest id: V8 keeps ids stable within a process),
// groups them and shows one retainer chain per top group (the first strong retainer of one
// object of the group at each step: a hint where to look, not the shortest path). Snapshots come
// from `GW_HEAP_SNAPSHOT_DIR` (bench/README.md) and must be of one process.
import { readFileSync } from "node:fs";

function load(path) {
  const snap = JSON.parse(readFileSync(path, "utf8"));
  const meta = snap.snapshot.meta;
  const nf = meta.node_fields;
  const nodeTypes = meta.node_types[0];
  const ef = meta.edge_fields;
  const edgeTypes = meta.edge_types[0];
  const N = nf.length;
  const E = ef.length;
  const iType = nf.indexOf("type");
  const iName = nf.indexOf("name");
  const iId = nf.indexOf("id");
  const iSize = nf.indexOf("self_size");
  const iEdges = nf.indexOf("edge_count");
  const count = snap.nodes.length / N;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += snap.nodes[i * N + iEdges] * E;
  }
  firstEdge[count] = snap.edges.length;
  const groupOf = (i) => {
    const type = nodeTypes[snap.nodes[i * N + iType]];
    const name = snap.strings[snap.nodes[i * N + iName]];
    if (type === "object" || type === "native") return name;
    if (type === "closure") return `(closure)`;
    if (type === "hidden" || type === "array" || type === "code") return `(${type}) ${name.slice(0, 40)}`;
    return `(${type})`;
  };
  return { snap, N, E, iId, iSize, count, firstEdge, groupOf, edgeTypes, ef };
}

function summary(h) {
  const out = new Map();
  for (let i = 0; i < h.count; i++) {
    const g = h.groupOf(i);
    const cur = out.get(g) ?? { size: 0, n: 0 };
    cur.size += h.snap.nodes[i * h.N + h.iSize];
    cur.n++;
    out.set(g, cur);
  }
  return out;
}

/** For each node, one retainer: the first node found with a strong edge to it. */
function retainers(h) {
  const ret = new Int32Array(h.count).fill(-1);
  const retEdge = new Int32Array(h.count).fill(-1);
  const iTo = h.ef.indexOf("to_node");
  const iEType = h.ef.indexOf("type");
  for (let i = 0; i < h.count; i++) {
    for (let e = h.firstEdge[i]; e < h.firstEdge[i + 1]; e += h.E) {
      if (h.edgeTypes[h.snap.edges[e + iEType]] === "weak") continue;
      const to = h.snap.edges[e + iTo] / h.N;
      if (ret[to] === -1) {
        ret[to] = i;
        retEdge[to] = e;
      }
    }
  }
  return { ret, retEdge };
}

const [a, b, topArg] = process.argv.slice(2);
const top = Number(topArg ?? 25);
const A = load(a);
const B = load(b);
const sa = summary(A);
const sb = summary(B);
const mib = (v) => (v / 2 ** 20).toFixed(2);
let totalA = 0;
let totalB = 0;
for (const v of sa.values()) totalA += v.size;
for (const v of sb.values()) totalB += v.size;
console.log(`live heap: ${mib(totalA)} -> ${mib(totalB)} MiB, nodes ${A.count} -> ${B.count}`);
const rows = [...new Set([...sa.keys(), ...sb.keys()])].map((g) => {
  const x = sa.get(g) ?? { size: 0, n: 0 };
  const y = sb.get(g) ?? { size: 0, n: 0 };
  return { g, a: x, b: y, d: y.size - x.size };
});
rows.sort((p, q) => q.d - p.d);
console.log("\ngrew most (self size MiB, count):");
for (const r of rows.slice(0, top)) console.log(`  ${mib(r.a.size)} -> ${mib(r.b.size)} (+${mib(r.d)})  n ${r.a.n} -> ${r.b.n}  ${r.g}`);
console.log("\nshrank most:");
for (const r of rows.slice(-8).reverse()) console.log(`  ${mib(r.a.size)} -> ${mib(r.b.size)} (${mib(r.d)})  n ${r.a.n} -> ${r.b.n}  ${r.g}`);
console.log("\nlargest groups in the second:");
for (const r of [...rows].sort((p, q) => q.b.size - p.b.size).slice(0, 12)) console.log(`  ${mib(r.b.size)} MiB  n ${r.b.n}  ${r.g}`);

// Objects allocated after the first snapshot and still alive in the second.
let maxIdA = 0;
// Embedder (native) nodes take ids from a separate range above 2^30: heap objects only.
const HEAP_IDS = 2 ** 30;
for (let i = 0; i < A.count; i++) {
  const id = A.snap.nodes[i * A.N + A.iId];
  if (id < HEAP_IDS) maxIdA = Math.max(maxIdA, id);
}
const fresh = new Map();
for (let i = 0; i < B.count; i++) {
  const id = B.snap.nodes[i * B.N + B.iId];
  if (id <= maxIdA || id >= HEAP_IDS) continue;
  const g = B.groupOf(i);
  const cur = fresh.get(g) ?? { size: 0, n: 0, sample: i };
  cur.size += B.snap.nodes[i * B.N + B.iSize];
  cur.n++;
  fresh.set(g, cur);
}
let freshTotal = 0;
for (const v of fresh.values()) freshTotal += v.size;
console.log(`\nallocated after the first snapshot and alive in the second: ${mib(freshTotal)} MiB`);
const { ret, retEdge } = retainers(B);
const iName = B.snap.snapshot.meta.edge_fields.indexOf("name_or_index");
const iEType = B.snap.snapshot.meta.edge_fields.indexOf("type");
const chain = (i) => {
  const parts = [];
  for (let k = 0; k < 12 && i >= 0; k++) {
    const e = retEdge[i];
    const p = ret[i];
    if (p < 0) break;
    const et = B.edgeTypes[B.snap.edges[e + iEType]];
    const en = et === "element" || et === "hidden" ? `[${B.snap.edges[e + iName]}]` : B.snap.strings[B.snap.edges[e + iName]];
    parts.push(`${B.groupOf(p)}.${en}`);
    i = p;
  }
  return parts.join(" <- ");
};
for (const [g, v] of [...fresh.entries()].sort((p, q) => q[1].size - p[1].size).slice(0, top)) {
  console.log(`  ${mib(v.size)} MiB n ${v.n}  ${g}\n      ${chain(v.sample)}`);
}
