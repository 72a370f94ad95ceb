// A strict parser of Prometheus' text exposition format (version 0.0.4), enough to
// hold /metrics to it: every line a HELP, a TYPE, a comment or a sample; names and
// label syntax as the format defines them; HELP and TYPE at most once per family and
// before its samples; a family's samples together; the text ends with a newline.
// Throws on the first violation, naming the line.

const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const labelName = '[a-zA-Z_][a-zA-Z0-9_]*';
const labelValue = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const labels = `\\{(?:${labelName}=${labelValue}(?:,${labelName}=${labelValue})*,?)?\\}`;
const number = '[-+]?(?:\\d+\\.?\\d*(?:[eE][-+]?\\d+)?|\\.\\d+(?:[eE][-+]?\\d+)?|Inf|NaN)';
const sampleLine = new RegExp(`^(${name})(${labels})? (${number})(?: (-?\\d+))?$`);
const helpLine = new RegExp(`^# HELP (${name}) ((?:[^\\\\]|\\\\[\\\\n])*)$`);
const typeLine = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`);
const suffixes = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

function parseValue(text) {
  if (/^[-+]?Inf$/.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}

function parseLabels(text) {
  const out = {};
  if (!text) return out;
  for (const m of text.slice(1, -1).matchAll(new RegExp(`(${labelName})=(${labelValue})`, 'g'))) {
    if (m[1] in out) throw new Error(`label ${m[1]} given twice`);
    out[m[1]] = m[2].slice(1, -1).replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
  }
  return out;
}

// Map from family name to {help, type, samples: [{name, labels, value, timestamp}]}.
export function parsePrometheus(text) {
  if (!text.endsWith('\n')) throw new Error('the text does not end with a newline');
  const families = new Map();
  const closed = new Set(); // families whose samples ended: no more may come
  let current = null;
  const family = (n) => {
    if (!families.has(n)) families.set(n, { help: null, type: null, samples: [] });
    return families.get(n);
  };
  // The family a sample name belongs to: itself, or a histogram/summary's base.
  const familyOf = (n) => {
    for (const [base, f] of families) {
      if ((suffixes[f.type] ?? []).some((s) => base + s === n)) return base;
    }
    return n;
  };
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, i) => {
    const where = `line ${i + 1} (${JSON.stringify(line)})`;
    if (line === '') return;
    let m;
    if ((m = helpLine.exec(line))) {
      const f = family(m[1]);
      if (f.help !== null) throw new Error(`${where}: a second HELP for ${m[1]}`);
      if (f.samples.length) throw new Error(`${where}: HELP after ${m[1]}'s samples`);
      f.help = m[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    } else if ((m = typeLine.exec(line))) {
      const f = family(m[1]);
      if (f.type !== null) throw new Error(`${where}: a second TYPE for ${m[1]}`);
      if (f.samples.length) throw new Error(`${where}: TYPE after ${m[1]}'s samples`);
      f.type = m[2];
    } else if (line.startsWith('#')) {
      if (/^# (HELP|TYPE) /.test(line)) throw new Error(`${where}: malformed ${line.split(' ')[1]} line`);
    } else if ((m = sampleLine.exec(line))) {
      const base = familyOf(m[1]);
      if (closed.has(base)) throw new Error(`${where}: ${base}'s samples are not together`);
      if (current !== null && current !== base) closed.add(current);
      current = base;
      const value = parseValue(m[3]);
      if (Number.isNaN(value) && m[3] !== 'NaN') throw new Error(`${where}: bad value ${m[3]}`);
      const f = family(base);
      if (f.type === 'counter' && !(value >= 0)) throw new Error(`${where}: a counter below 0`);
      f.samples.push({ name: m[1], labels: parseLabels(m[2]), value, timestamp: m[4] ? Number(m[4]) : null });
    } else {
      throw new Error(`${where}: neither a comment nor a sample`);
    }
  });
  for (const [n, f] of families) {
    if (f.samples.length === 0) throw new Error(`${n} has HELP or TYPE but no sample`);
    if (f.type === null) f.type = 'untyped';
  }
  return families;
}
