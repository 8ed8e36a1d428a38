// gpuscale serve's page: fills the form from /api/catalog, runs a configuration through
// /api/run and shows what `gpuscale run --format json` would print, with its timeline, the
// machine's busy links and the speedup over the GPU counts. A query string can preset the form
// and run it (?machine=dgx1-v100&workload=lenet&set=link_kinds.nvlink.lane_bandwidth=50 GB/s,
// &remove=gpu0,gpu1 to take a link away, &add=gpu0,gpu5,nvlink,1 to add one).
"use strict";

const $ = (id) => document.getElementById(id);

// The result columns the table shows: the key of `gpuscale run --format json`, its heading, how
// a value reads, the docs section that explains it (test_docs_html.cpp checks each exists), and
// for memory, when a value is shown red (it does not fit the GPU).
const COLUMNS = [
  { key: "gpus", head: "GPUs", show: (v) => String(v), doc: "experiments.md#keys" },
  { key: "iteration_s", head: "iteration ms", show: ms, doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "fpbp_s", head: "FP+BP ms", show: ms, doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "wu_s", head: "WU ms", show: ms, doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "input_wait_s", head: "input ms", show: ms, doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "rest_s", head: "rest ms", show: ms, doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "exposed_comm_s", head: "exposed exchange ms", show: ms, doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "speedup", head: "speedup", show: (v) => v.toFixed(2), doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "efficiency", head: "efficiency", show: pct, doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "throughput", head: "samples/s", show: (v) => v.toFixed(1), doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "epoch_s", head: "epoch s", show: (v) => v.toFixed(1), doc: "replay.md#what-each-number-of-a-result-means" },
  { key: "memory_gpu0_gb", head: "memory GB", show: (v) => v.toFixed(2), doc: "memory-model.md#memory-per-gpu", tooBig: (r) => !r.fits_memory },
  { key: "max_link_utilisation", head: "busiest link", show: pct, doc: "replay.md#what-each-number-of-a-result-means" },
];

// The columns a sampled run adds (docs/variability.md): the iteration's 10th and 90th
// percentiles and the speedups they give.
const SAMPLED_COLUMNS = [
  { key: "iteration_p10_s", head: "p10 ms", show: ms, doc: "variability.md#samples" },
  { key: "iteration_p90_s", head: "p90 ms", show: ms, doc: "variability.md#samples" },
  { key: "speedup_p10", head: "speedup p10", show: (v) => v.toFixed(2), doc: "variability.md#samples" },
  { key: "speedup_p90", head: "speedup p90", show: (v) => v.toFixed(2), doc: "variability.md#samples" },
];

// The columns of a layout (`gpuscale train --format json`) the layouts' table shows.
const LAYOUT_COLUMNS = [
  { key: "tp", head: "TP", show: String, doc: "parallelism.md#validity" },
  { key: "pp", head: "PP", show: String, doc: "parallelism.md#validity" },
  { key: "dp", head: "DP", show: String, doc: "parallelism.md#validity" },
  { key: "micro_batches", head: "micro-batches", show: String, doc: "parallelism.md#tensor-pipeline-and-data-parallelism-together-megatron-lm" },
  { key: "iteration_s", head: "iteration s", show: (v) => v.toFixed(3), doc: "parallelism.md#the-simulated-iteration-pipeline_simhpp" },
  { key: "bubble", head: "bubble", show: pct, doc: "parallelism.md#the-simulated-iteration-pipeline_simhpp" },
  { key: "tokens_per_s", head: "tokens/s", show: (v) => v.toFixed(0), doc: "parallelism.md#the-simulated-iteration-pipeline_simhpp" },
  { key: "mfu", head: "MFU", show: pct, doc: "parallelism.md#the-simulated-iteration-pipeline_simhpp" },
  { key: "tp_comm_s", head: "TP comm s", show: (v) => v.toFixed(3), doc: "parallelism.md#the-simulated-iteration-pipeline_simhpp" },
  { key: "pp_comm_s", head: "PP comm s", show: (v) => v.toFixed(3), doc: "parallelism.md#the-simulated-iteration-pipeline_simhpp" },
  { key: "dp_comm_s", head: "DP comm s", show: (v) => v.toFixed(3), doc: "parallelism.md#the-simulated-iteration-pipeline_simhpp" },
  { key: "memory_per_gpu_bytes", head: "memory GB", show: (v) => (v / 1e9).toFixed(1), doc: "parallelism.md#memory-per-gpu-parallel_memoryhpp", tooBig: (l) => !l.fits },
];

// What a lesson leaves as shipped unless it says otherwise.
const LESSON_DEFAULTS = { set: [], remove: [], add: [], samples: "", seed: 1, compute_cv: "", host_cv: "" };

function ms(seconds) { return (seconds * 1e3).toFixed(2); }
function pct(fraction) { return (fraction * 100).toFixed(1) + "%"; }

// The tutorial's lessons as steps: what each sets, and what to look for.
const LESSONS = [
  { title: "Read a machine: the DGX-1", config: { machine: "dgx1-v100", workload: "resnet-50", framework: "mxnet", comm: "p2p", gpus: "1,2,4,8", batch: 16 },
    text: "Eight V100s joined by NVLink in a hybrid cube-mesh; some pairs share no NVLink and copy through the host. The picture below shows which links the exchange kept busy." },
  { title: "Two ways to exchange: P2P", config: { machine: "dgx1-v100", workload: "lenet", framework: "mxnet", comm: "p2p", gpus: "1,2,4,8", batch: 16, without: ["input"] },
    text: "LeNet is small: its iteration is mostly the exchange (the input pipeline is left out, as in the tutorial, so that the GPUs and the links are all there is). MXNet's P2P sums each tensor on one GPU with direct copies. Keep this result for side by side, then take the next step." },
  { title: "…and NCCL's rings", config: { machine: "dgx1-v100", workload: "lenet", framework: "mxnet", comm: "nccl_reduce_bcast", gpus: "1,2,4,8", batch: 16, without: ["input"] },
    text: "NCCL cuts each tensor into chunks that flow around rings of NVLinks, all rings at once. Compare the WU column and the speedup with P2P's." },
  { title: "What if NVLink were twice as fast?", config: { machine: "dgx1-v100", workload: "lenet", framework: "mxnet", comm: "p2p", gpus: "8", batch: 16, without: ["input"], set: ["link_kinds.nvlink.lane_bandwidth=50 GB/s"] },
    text: "Twice the NVLink bandwidth barely moves LeNet with P2P: its copies wait for the pairs that go through the host. Try PCIe at twice its bandwidth instead (1.97 GB/s a lane)." },
  { title: "Take one NVLink away", config: { machine: "dgx1-v100", workload: "lenet", framework: "mxnet", comm: "p2p", gpus: "8", batch: 16, without: ["input"], remove: ["gpu0,gpu1"] },
    text: "With gpu0–gpu1's NVLink taken away (under Each link), those two GPUs share no NVLink, so MXNet copies between them through the host, over PCIe and QPI: WU grows. Untick it, add a link of your own instead, and see which GPUs' ports are all taken." },
  { title: "A big model hides the exchange", config: { machine: "dgx1-v100", workload: "resnet-50", framework: "mxnet", comm: "nccl_reduce_bcast", gpus: "1,2,4,8", batch: 16, without: ["input"] },
    text: "ResNet-50 computes far longer per byte of gradient than LeNet, so its exchange hides behind backward and it scales nearly linearly." },
  { title: "Error bars: the wait for the slowest GPU", config: { machine: "dgx1-v100", workload: "resnet-50", framework: "pytorch-ddp", comm: "nccl", gpus: "1,2,4,8", batch: 16, without: ["input"], compute_cv: 0.05, samples: 32 },
    text: "Each GPU's kernels now take 5% more or less from one iteration to the next (a what-if spread), and every allreduce waits for the slowest GPU: the more GPUs, the slower the slowest. Compare the median speedup with the deterministic run's (empty Samples), and the band on the chart." },
  { title: "Lay out GPT-3 on 1,024 H200s", machine: "dgx-h200-superpod", train: { workload: "gpt3-175b", gpus: 1024, tp: "", pp: "", micro_batch: 1, global_batch: 1536, recompute: "none", precision: "" },
    text: "A 175-billion-parameter model does not fit one GPU: Megatron-LM splits each layer over TP GPUs of a node, the layers into PP pipeline stages, and copies the rest DP times. Every valid layout of 1,024 GPUs, fastest first: a deeper pipeline idles longer (bubble), a wider tensor split talks more inside the node, and the memory column says which fit the H200's 141 GB." },
];

let catalog = null;
let shipped = null;   // the chosen machine as shipped: {name, link_kinds}
let current = null;   // the last run: {label, results}
let pinned = null;    // the run kept for side by side

async function api(path, options) {
  const response = await fetch(path, options);
  const body = await response.json().catch(() => ({}));  // a failure may have no JSON body
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

function fillSelect(select, names, keepFirst) {
  if (!keepFirst) select.replaceChildren();
  for (const name of names) select.add(new Option(name, name));
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

function headRow(table, texts) {
  const head = table.insertRow();
  for (const text of texts) {
    const th = document.createElement("th");
    th.textContent = text;
    head.appendChild(th);
  }
}

// An input for one value of the machine, remembering the shipped value; `data` says what it sets.
function valueInput(value, data) {
  const input = document.createElement("input");
  input.type = "number";
  input.step = "any";
  input.value = String(+Number(value).toPrecision(6));
  input.dataset.shipped = input.value;
  Object.assign(input.dataset, data);
  return input;
}

async function loadMachine(name) {
  shipped = await api(`/api/machine?name=${encodeURIComponent(name)}`);
  const kinds = $("link-kinds");
  kinds.replaceChildren();
  headRow(kinds, ["kind", "GB/s per lane", "latency µs", "efficiency"]);
  for (const [kind, k] of Object.entries(shipped.link_kinds)) {
    const row = kinds.insertRow();
    row.insertCell().textContent = kind;
    for (const field of ["lane_bandwidth_GBps", "latency_us", "efficiency"])
      row.insertCell().appendChild(valueInput(k[field], { kind, field }));
  }
  const links = $("each-link");
  links.replaceChildren();
  headRow(links, ["link", "lanes", "GB/s per lane", "latency µs", "remove"]);
  for (const l of shipped.links) {
    const row = links.insertRow();
    row.insertCell().textContent = `${l.a}–${l.b} (${l.kind})`;
    for (const field of ["lanes", "lane_bandwidth_GBps", "latency_us"])
      row.insertCell().appendChild(valueInput(l[field], { link: String(l.index), field }));
    const remove = document.createElement("input");
    remove.type = "checkbox";
    remove.className = "remove-link";
    remove.title = `take ${l.a}–${l.b} away`;
    Object.assign(remove.dataset, { link: String(l.index), a: l.a, b: l.b });
    row.insertCell().appendChild(remove);
  }
  $("each-link-summary").textContent = `Each link (${shipped.links.length}; a cluster's are its node's)`;
  const devices = shipped.devices.map((d) => d.name);
  fillSelect($("add-a"), devices);
  fillSelect($("add-b"), devices);
  fillSelect($("add-kind"), Object.keys(shipped.link_kinds));
  $("added-links").replaceChildren();
}

// A link added on the page: an item of the list under the links, with a button that takes it
// back. False (and the error says why) if the machine has no such devices or kind.
function addLink(a, b, kind, lanes) {
  const devices = shipped.devices.map((d) => d.name);
  if (!devices.includes(a) || !devices.includes(b) || a === b || !Object.hasOwn(shipped.link_kinds, kind) || !(lanes >= 1)) {
    showError(`add=${a},${b},${kind},${lanes}: a new link joins two of this machine's devices (${devices.join(", ")}) with one of its link kinds (${Object.keys(shipped.link_kinds).join(", ")}) and 1 lane or more`);
    return false;
  }
  const item = document.createElement("li");
  Object.assign(item.dataset, { a, b, kind, lanes: String(lanes) });
  const undo = document.createElement("button");
  undo.type = "button";
  undo.textContent = "×";
  undo.title = "take this link back";
  undo.addEventListener("click", () => item.remove());
  item.append(`${a}–${b} (${kind}, ${lanes} lane${lanes > 1 ? "s" : ""}) `, undo);
  $("added-links").appendChild(item);
  return true;
}

// A link taken away: its box ticked. False if the machine has no link between `a` and `b`.
function removeLink(a, b) {
  const box = [...$("each-link").querySelectorAll("input.remove-link")].find(
    (x) => (x.dataset.a === a && x.dataset.b === b) || (x.dataset.a === b && x.dataset.b === a));
  if (!box) {
    showError(`remove=${a},${b}: this machine has no link ${a}–${b}`);
    return false;
  }
  box.checked = true;
  return true;
}

// How a field is written in a `--set` assignment and in a machine file.
const FIELD_UNITS = {
  lane_bandwidth_GBps: ["lane_bandwidth", " GB/s"],
  latency_us: ["latency", " us"],
  efficiency: ["efficiency", ""],
  lanes: ["lanes", ""],
};

// The inputs whose value differs from the shipped one (an emptied one keeps the shipped value).
function changedInputs() {
  return [...$("links").querySelectorAll("input[data-shipped]")].filter((input) => input.value !== "" && input.value !== input.dataset.shipped);
}

// A link kind's changes as `--set` assignments, one per changed value.
function kindChanges() {
  return changedInputs().filter((input) => input.dataset.kind !== undefined).map((input) => {
    const [key, unit] = FIELD_UNITS[input.dataset.field];
    return `link_kinds.${input.dataset.kind}.${key}=${input.value}${unit}`;
  });
}

// Each link's changes, removals and new links as a `base:` file's `links:` entries, matched to
// the machine's links by their endpoints (so that a removal does not renumber the others).
function linkEntries() {
  const entries = [];
  const removed = new Set();
  for (const box of $("each-link").querySelectorAll("input.remove-link:checked")) {
    removed.add(box.dataset.link);
    entries.push({ a: box.dataset.a, b: box.dataset.b, remove: true });
  }
  const changed = new Map();
  for (const input of changedInputs()) {
    if (input.dataset.link === undefined || removed.has(input.dataset.link)) continue;
    const l = shipped.links[Number(input.dataset.link)];
    if (!changed.has(l.index)) changed.set(l.index, { a: l.a, b: l.b });
    const [key, unit] = FIELD_UNITS[input.dataset.field];
    changed.get(l.index)[key] = unit ? `${input.value}${unit}` : Number(input.value);
  }
  entries.push(...changed.values());
  for (const item of $("added-links").children) {
    entries.push({ a: item.dataset.a, b: item.dataset.b, kind: item.dataset.kind, lanes: Number(item.dataset.lanes) });
  }
  return entries;
}

// Link changes from the query string (link_kinds.KIND.FIELD=VALUE, links.N.FIELD=VALUE), into
// the form; the form's units only. False if one is not in them (the error says so).
function applyChanges(assignments) {
  const fields = { lane_bandwidth: ["lane_bandwidth_GBps", "GB/s"], latency: ["latency_us", "us"], efficiency: ["efficiency", ""], lanes: ["lanes", ""] };
  let applied = true;
  for (const assignment of assignments || []) {
    const match = /^(?:link_kinds\.([a-z_]+)|links\.(\d+))\.(lane_bandwidth|latency|efficiency|lanes)=\s*([0-9.e+-]+)\s*(GB\/s|us)?$/.exec(assignment);
    const owner = match && (match[1] !== undefined ? `[data-kind="${match[1]}"]` : `[data-link="${match[2]}"]`);
    const input = match && $("links").querySelector(`input${owner}[data-field="${fields[match[3]][0]}"]`);
    if (!input || (match[5] || "") !== fields[match[3]][1]) {
      showError(`set=${assignment}: the page takes link_kinds.KIND.FIELD and links.N.FIELD of this machine, lane_bandwidth in GB/s, latency in us, efficiency and lanes bare`);
      applied = false;
      continue;
    }
    input.value = match[4];
  }
  return applied;
}

// The spreads of the form as a machine file's `variability:` section (docs/variability.md).
function variability() {
  const section = {};
  for (const [part, id] of [["compute", "compute_cv"], ["host", "host_cv"]]) {
    const cv = Number($(id).value);
    if ($(id).value !== "" && cv > 0) section[part] = { distribution: "normal", cv, source: "a what-if on gpuscale serve's page" };
  }
  return section;
}

// A comma-separated list of whole numbers (empty: none).
function numbers(text) {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "").map(Number);
}

function trainRequest() {
  const tp = numbers($("train-tp").value), pp = numbers($("train-pp").value);
  return {
    machine: $("machine").value,
    set: kindChanges(),
    links: linkEntries(),
    workload: $("train-workload").value,
    precision: $("train-precision").value,
    gpus: Number($("train-gpus").value),
    ...(tp.length ? { tp } : {}),
    ...(pp.length ? { pp } : {}),
    micro_batch: Number($("train-micro-batch").value),
    global_batch: Number($("train-global-batch").value),
    recompute: $("train-recompute").value,
    zero1: $("train-zero1").checked,
    sequence_parallel: $("train-sequence-parallel").checked,
  };
}

function showLayouts(r, layouts) {
  $("layouts").hidden = false;
  const first = layouts[0];
  $("layouts-caption").textContent = `${r.workload} on ${r.machine} (${r.gpus} × ${first.gpu}), micro-batch ${r.micro_batch}, global batch ${r.global_batch}, recompute ${r.recompute}; precision ${first.precision}: ${layouts.length} valid layout${layouts.length > 1 ? "s" : ""}, fastest first`;
  fillTable($("layout-rows"), LAYOUT_COLUMNS, layouts, (row, l) => { row.dataset.layout = `${l.tp}x${l.pp}x${l.dp}`; });
}

async function layOut() {
  const r = trainRequest();
  showError("");
  $("train-status").textContent = "laying out…";
  $("lay-out").disabled = true;
  try {
    const answer = await api("/api/train", { method: "POST", body: JSON.stringify(r) });
    showLayouts(r, answer.layouts);
    $("train-status").textContent = "";
    document.body.dataset.trainState = "done";
  } catch (e) {
    showError(e.message);
    $("train-status").textContent = "";
    document.body.dataset.trainState = "error";
  } finally {
    $("lay-out").disabled = false;
  }
}

// The layouts' form from `config` (train_defaults, a lesson's `train`, the query string's
// train_* keys).
function setTrainConfig(config) {
  for (const [key, id] of [["workload", "train-workload"], ["gpus", "train-gpus"], ["tp", "train-tp"], ["pp", "train-pp"],
                           ["micro_batch", "train-micro-batch"], ["global_batch", "train-global-batch"],
                           ["recompute", "train-recompute"], ["precision", "train-precision"]]) {
    if (config[key] !== undefined) $(id).value = config[key] ? String(config[key]) : "";
  }
  for (const [key, id] of [["zero1", "train-zero1"], ["sequence_parallel", "train-sequence-parallel"]]) {
    if (config[key] !== undefined) $(id).checked = config[key] === true || config[key] === "1" || config[key] === "true";
  }
}

function request() {
  const samples = Number($("samples").value) || 0;
  const seed = $("seed").value === "" ? 1 : Number($("seed").value);  // the CLI's default
  const sampled = samples > 0 ? { samples, seed } : {};
  const spread = variability();
  return {
    machine: $("machine").value,
    set: kindChanges(),
    links: linkEntries(),
    workload: $("workload").value,
    framework: $("framework").value,
    comm: $("comm").value,
    precision: $("precision").value,
    without: [...$("without").querySelectorAll("input:checked")].map((box) => box.value),
    gpus: $("gpus").value.split(",").map((s) => Number(s.trim())).filter((n) => n > 0),
    batch: Number($("batch").value),
    images: Number($("images").value) || 0,
    ...(Object.keys(spread).length ? { variability: spread } : {}),
    ...sampled,
  };
}

function describeLink(l) {
  if (l.remove) return `without ${l.a}–${l.b}`;
  if (l.kind) return `with ${l.a}–${l.b} (${l.kind} × ${l.lanes})`;
  const fields = Object.entries(l).filter(([key]) => key !== "a" && key !== "b");
  return `${l.a}–${l.b} ${fields.map(([key, value]) => `${key}=${value}`).join(" ")}`;
}

function label(r) {
  const spreads = Object.entries(r.variability || {}).map(([part, d]) => `${part} ±${(d.cv * 100).toPrecision(2)}%`);
  const sampled = r.samples ? [`${r.samples} samples, seed ${r.seed}`] : [];
  const what = [...r.set, ...r.links.map(describeLink), ...spreads, ...sampled].map((x) => `, ${x}`).join("");
  const without = r.without.length ? `, without ${r.without.join(", ")}` : "";
  return `${r.workload} on ${r.machine}${what}, ${r.comm}, batch ${r.batch}${without}`;
}

function docLink(doc, text) {
  const a = document.createElement("a");
  a.href = `/docs/${doc}`;
  a.textContent = text;
  return a;
}

// A table of `items` (result rows, layouts): each heading linked to the docs section that
// explains it, and each cell keeping its key and exact value (data-key, data-value) for tests
// and scripts; `tag` marks each row.
function fillTable(table, columns, items, tag) {
  table.replaceChildren();
  const head = table.insertRow();
  for (const c of columns) {
    const th = document.createElement("th");
    th.appendChild(docLink(c.doc, c.head));
    head.appendChild(th);
  }
  for (const item of items) {
    const row = table.insertRow();
    tag(row, item);
    for (const c of columns) {
      const cell = row.insertCell();
      cell.dataset.key = c.key;
      cell.dataset.value = JSON.stringify(item[c.key]);
      cell.appendChild(docLink(c.doc, c.show(item[c.key])));
      if (c.tooBig && c.tooBig(item)) cell.classList.add("too-big");
    }
  }
}

function showRows(results) {
  const columns = results.length && results[0].samples ? [...COLUMNS, ...SAMPLED_COLUMNS] : COLUMNS;
  fillTable($("rows"), columns, results, (row, r) => { row.dataset.gpus = r.gpus; });
}

// Speedup against the GPU count, a line per run (this one, and the one kept), and ideal scaling.
function speedupChart(series) {
  const width = 520, height = 300, left = 48, bottom = 36, top = 16, right = 16;
  const gpus = series.flatMap((s) => s.results.map((r) => r.gpus));
  const most = Math.max(2, ...gpus);
  const highest = Math.max(most, ...series.flatMap((s) => s.results.map((r) => r.speedup)));
  const x = (g) => left + (Math.log2(g) / Math.log2(most)) * (width - left - right);
  const y = (s) => height - bottom - (s / highest) * (height - top - bottom);
  const colours = ["#1f77b4", "#d62728"];
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" role="img" aria-label="speedup against GPUs">`;
  svg += `<line x1="${x(1)}" y1="${y(1)}" x2="${x(most)}" y2="${y(most)}" stroke="#999" stroke-dasharray="4 3"/>`;
  svg += `<text x="${x(most) - 4}" y="${y(most) + 14}" text-anchor="end" font-size="11" fill="#666">ideal</text>`;
  for (let g = 1; g <= most; g *= 2) {
    svg += `<text x="${x(g)}" y="${height - bottom + 16}" text-anchor="middle" font-size="11">${g}</text>`;
  }
  svg += `<text x="${(left + width) / 2}" y="${height - 4}" text-anchor="middle" font-size="12">GPUs</text>`;
  svg += `<text x="12" y="${top + 8}" font-size="12">speedup</text>`;
  svg += `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="#333"/>`;
  series.forEach((s, i) => {
    if (s.results.length && s.results[0].samples) {  // the 10th to 90th percentile, shaded
      const band = [...s.results.map((r) => `${x(r.gpus)},${y(r.speedup_p90)}`),
                    ...[...s.results].reverse().map((r) => `${x(r.gpus)},${y(r.speedup_p10)}`)].join(" ");
      svg += `<polygon points="${band}" fill="${colours[i]}" fill-opacity="0.18" stroke="none"/>`;
    }
    const points = s.results.map((r) => `${x(r.gpus)},${y(r.speedup)}`).join(" ");
    svg += `<polyline points="${points}" fill="none" stroke="${colours[i]}" stroke-width="2"/>`;
    for (const r of s.results) svg += `<circle cx="${x(r.gpus)}" cy="${y(r.speedup)}" r="3" fill="${colours[i]}"/>`;
    const shown = s.label.length > 90 ? `${s.label.slice(0, 89)}…` : s.label;  // the caption has it whole
    svg += `<text x="${left + 8}" y="${top + 14 + 14 * i}" font-size="11" fill="${colours[i]}">${escapeText(shown)}</text>`;
  });
  return svg + "</svg>";
}

function escapeText(text) {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

function showComparison() {
  $("comparison").hidden = !pinned || !current;
  if (!pinned || !current) return;
  $("comparison-caption").textContent = `kept: ${pinned.label} | now: ${current.label}`;
  const table = $("comparison-rows");
  table.replaceChildren();
  const head = table.insertRow();
  for (const text of ["GPUs", "iteration ms, kept", "iteration ms, now", "change", "speedup, kept", "speedup, now"]) {
    const th = document.createElement("th");
    th.appendChild(docLink("replay.md#what-each-number-of-a-result-means", text));
    head.appendChild(th);
  }
  for (const now of current.results) {
    const kept = pinned.results.find((r) => r.gpus === now.gpus);
    if (!kept) continue;
    const row = table.insertRow();
    const change = (now.iteration_s / kept.iteration_s - 1) * 100;
    for (const text of [String(now.gpus), ms(kept.iteration_s), ms(now.iteration_s),
                        `${change >= 0 ? "+" : ""}${change.toFixed(1)}%`,
                        kept.speedup.toFixed(2), now.speedup.toFixed(2)]) {
      row.insertCell().textContent = text;
    }
  }
}

async function run() {
  const r = request();
  const file = machineFileText();
  showError("");
  $("status").textContent = "running…";
  $("run").disabled = true;
  const started = performance.now();
  try {
    const answer = await api("/api/run", { method: "POST", body: JSON.stringify(r) });
    current = { label: label(r), results: answer.results };
    $("caption").textContent = label(r);
    showRows(answer.results);
    $("speedup").innerHTML = speedupChart(pinned ? [current, pinned] : [current]);
    $("machine-file").textContent = file;
    $("timeline").innerHTML = answer.timeline_svg || "";
    $("machine-picture").innerHTML = answer.machine_svg || "";
    $("pin").disabled = false;
    showComparison();
    $("status").textContent = `done in ${((performance.now() - started) / 1000).toFixed(1)} s`;
    document.body.dataset.state = "done";
  } catch (e) {
    showError(e.message);
    $("status").textContent = "";
    document.body.dataset.state = "error";
  } finally {
    $("run").disabled = false;
  }
}

async function setConfig(config) {
  if (config.machine && config.machine !== $("machine").value) {
    $("machine").value = config.machine;
    await loadMachine(config.machine);
  }
  for (const key of ["workload", "framework", "comm", "precision", "gpus", "batch", "images", "samples", "seed", "compute_cv", "host_cv"]) {
    if (config[key] !== undefined) $(key).value = config[key] ? String(config[key]) : "";
  }
  for (const box of $("without").querySelectorAll("input")) {
    box.checked = (config.without || []).includes(box.value);
  }
  let understood = applyChanges(config.set);
  for (const pair of config.remove || []) understood = removeLink(...pair.split(",")) && understood;
  for (const link of config.add || []) {
    const [a, b, kind, lanes] = link.split(",");
    understood = addLink(a, b, kind, Number(lanes)) && understood;
  }
  // Changes to single links are shown where they are made.
  if (linkEntries().length) $("each-link").closest("details").open = true;
  return understood;
}

function resetLinks() {
  for (const input of $("links").querySelectorAll("input[data-shipped]")) input.value = input.dataset.shipped;
  for (const box of $("links").querySelectorAll("input.remove-link")) box.checked = false;
  $("added-links").replaceChildren();
}

// The machine of the form (its link kinds, links and spreads changed) as a `base:` file that
// `gpuscale run --topology FILE` takes (docs/topology-schema.md, "Deriving a machine from another").
function machineFileText() {
  const kinds = {};
  for (const input of changedInputs()) {
    if (input.dataset.kind === undefined) continue;
    const [key, unit] = FIELD_UNITS[input.dataset.field];
    (kinds[input.dataset.kind] ||= []).push(`${key}: ${input.value}${unit}`);
  }
  const links = linkEntries();
  const spread = variability();
  let yaml = `# A what-if machine made on gpuscale serve's page: run it with\n` +
             `#   gpuscale run --topology ${shipped.name}-what-if.yaml\n` +
             `base: ${shipped.name}\nname: ${shipped.name}-what-if\n` +
             `description: ${shipped.name} as changed on the page\n`;
  if (Object.keys(kinds).length) {
    yaml += "link_kinds:\n";
    for (const [kind, fields] of Object.entries(kinds)) yaml += `  ${kind}: {${fields.join(", ")}}\n`;
  }
  if (links.length) {
    yaml += "links:                # matched to the base's links by their endpoints\n";
    for (const l of links) {
      yaml += `  - {${Object.entries(l).map(([key, value]) => `${key}: ${value}`).join(", ")}}\n`;
    }
  }
  if (Object.keys(spread).length) {
    yaml += "variability:          # used by runs with --samples\n";
    for (const [part, d] of Object.entries(spread)) {
      yaml += `  ${part}: {distribution: ${d.distribution}, cv: ${d.cv}, source: "${d.source}"}\n`;
    }
  }
  return yaml;
}

function downloadMachine() {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([machineFileText()], { type: "text/yaml" }));
  a.download = `${shipped.name}-what-if.yaml`;
  a.click();
}

function showLessons() {
  LESSONS.forEach((lesson, i) => {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = lesson.title;
    button.addEventListener("click", async () => {
      $("lesson-text").textContent = `${i + 1}. ${lesson.text}`;
      resetLinks();
      if (lesson.train) {
        await setConfig({ ...LESSON_DEFAULTS, machine: lesson.machine });
        setTrainConfig({ zero1: false, sequence_parallel: false, ...lesson.train });
        await layOut();
      } else {
        await setConfig({ ...LESSON_DEFAULTS, ...lesson.config });
        await run();
      }
    });
    item.appendChild(button);
    $("lesson-list").appendChild(item);
  });
}

// The form's first configuration: the default study's case, then what the query string says.
function queryConfig(defaults) {
  const query = new URLSearchParams(location.search);
  const config = { ...defaults, gpus: defaults.gpus.join(","), set: query.getAll("set"),
                   remove: query.getAll("remove"), add: query.getAll("add"),
                   without: query.has("without") ? query.get("without").split(",") : defaults.without };
  for (const key of ["machine", "workload", "framework", "comm", "precision", "gpus", "batch", "images", "samples", "seed", "compute_cv", "host_cv"]) {
    if (query.has(key)) config[key] = query.get(key);
  }
  return config;
}

// The layouts' form from the query string: `train` lays out on opening, with `train_KEY`s
// (train_workload, train_gpus, train_tp, train_pp, train_micro_batch, train_global_batch,
// train_recompute, train_precision, train_zero1, train_sequence_parallel).
function queryTrainConfig() {
  const query = new URLSearchParams(location.search);
  const config = {};
  for (const key of ["workload", "gpus", "tp", "pp", "micro_batch", "global_batch", "recompute", "precision", "zero1", "sequence_parallel"]) {
    if (query.has(`train_${key}`)) config[key] = query.get(`train_${key}`);
  }
  return config;
}

async function start() {
  try {
    catalog = await api("/api/catalog");
  } catch (e) {
    showError(e.message);
    return;
  }
  fillSelect($("machine"), catalog.machines.map((m) => m.name));
  fillSelect($("workload"), catalog.workloads);
  fillSelect($("framework"), catalog.frameworks, true);
  fillSelect($("comm"), catalog.comms);
  fillSelect($("precision"), catalog.precisions, true);
  fillSelect($("train-workload"), catalog.transformers);
  fillSelect($("train-recompute"), catalog.recomputes);
  fillSelect($("train-precision"), catalog.precisions, true);
  setTrainConfig(catalog.train_defaults);
  setTrainConfig(queryTrainConfig());
  for (const mechanism of catalog.mechanisms) {
    const box = document.createElement("input");
    box.type = "checkbox";
    box.value = mechanism;
    const item = document.createElement("label");
    item.className = "check";
    item.append(box, ` ${mechanism}`);
    $("without").appendChild(item);
  }
  const config = queryConfig(catalog.defaults);
  $("machine").value = config.machine;
  await loadMachine(config.machine);
  const understood = await setConfig(config);
  $("machine").addEventListener("change", () => loadMachine($("machine").value));
  $("form").addEventListener("submit", (event) => { event.preventDefault(); run(); });
  $("train-form").addEventListener("submit", (event) => { event.preventDefault(); layOut(); });
  $("pin").addEventListener("click", () => { pinned = current; showComparison(); });
  $("download").addEventListener("click", downloadMachine);
  $("reset-links").addEventListener("click", resetLinks);
  $("add").addEventListener("click", () => {
    showError("");
    addLink($("add-a").value, $("add-b").value, $("add-kind").value, Number($("add-lanes").value));
  });
  showLessons();
  if (understood) await run();
  if (understood && new URLSearchParams(location.search).has("train")) await layOut();
}

start();
