// The deployment files (docs/deploy.md) against what they describe: the nginx config
// the docs print is the file the replica test runs, and the Kubernetes manifest has
// the fields a cluster needs, with its port, probes and autoscaling metric matching
// what a running llama-server serves. No cluster runs here, so this is the check.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Replica, KEY } from './replicas.mjs';

const source = process.env.LLAMA_SOURCE_DIR;
const read = (file) => readFileSync(path.join(source, file), 'utf8');

let replica;
before(async () => {
  assert.ok(source, 'LLAMA_SOURCE_DIR is not set: run this test through ctest');
  replica = await Replica.start();
});
after(async () => replica?.kill());

test('docs/deploy.md prints deploy/nginx/llama-proxy.conf verbatim', () => {
  // The file's header comment says where it comes from; the docs show what follows it.
  const file = read('deploy/nginx/llama-proxy.conf').replace(/^(#.*\n)+\n/, '');
  const blocks = [...read('docs/deploy.md').matchAll(/```nginx\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.includes(file), 'no nginx block in docs/deploy.md equals deploy/nginx/llama-proxy.conf');
  // The upstream block the docs give is the one the replica test writes.
  assert.ok(blocks.some((b) => /least_conn;/.test(b) && /max_fails=3 fail_timeout=2s;/.test(b)
    && /include \/etc\/nginx\/llama-proxy.conf;/.test(b)), 'docs/deploy.md lacks the upstream block');
});

// The manifest's objects by kind.
function manifest() {
  const docs = parseAllDocuments(read('deploy/kubernetes/llama-server.yaml'));
  const objects = {};
  for (const d of docs) {
    assert.deepEqual(d.errors, [], `YAML errors: ${d.errors.join('; ')}`);
    const o = d.toJS();
    for (const field of ['apiVersion', 'kind', 'metadata']) assert.ok(o[field], `an object lacks ${field}`);
    assert.ok(o.metadata.name, `${o.kind} lacks metadata.name`);
    assert.equal(objects[o.kind], undefined, `two objects of kind ${o.kind}`);
    objects[o.kind] = o;
  }
  return objects;
}

// The value after `flag` in a container's args.
function arg(args, flag) {
  const i = args.indexOf(flag);
  assert.ok(i >= 0 && i + 1 < args.length, `the container's args lack ${flag}`);
  return args[i + 1];
}

test('docs/deploy.md prints deploy/kubernetes/llama-server.yaml verbatim', () => {
  const file = read('deploy/kubernetes/llama-server.yaml');
  const blocks = [...read('docs/deploy.md').matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.includes(file), 'no yaml block in docs/deploy.md equals deploy/kubernetes/llama-server.yaml');
});

test('the Kubernetes manifest: a Deployment, a Service and an HPA that fit together', async () => {
  const { Deployment: dep, Service: svc, HorizontalPodAutoscaler: hpa } = manifest();
  assert.ok(dep && svc && hpa, 'the manifest needs a Deployment, a Service and a HorizontalPodAutoscaler');
  assert.equal(dep.apiVersion, 'apps/v1');
  assert.equal(hpa.apiVersion, 'autoscaling/v2');
  const labels = dep.spec.template.metadata.labels;
  for (const [k, v] of Object.entries(dep.spec.selector.matchLabels)) assert.equal(labels[k], v, `pod label ${k}`);
  for (const [k, v] of Object.entries(svc.spec.selector)) assert.equal(labels[k], v, `service selector ${k}`);

  const [c] = dep.spec.template.spec.containers;
  const port = Number(arg(c.args, '--port'));
  const http = c.ports.find((p) => p.name === 'http');
  assert.equal(http.containerPort, port, 'containerPort is the port llama-server is given');
  assert.equal(arg(c.args, '--host'), '0.0.0.0', 'in a pod the server must listen beyond loopback');
  assert.ok(c.args.includes('--api-key'), 'the server asks for a key');
  assert.equal(dep.spec.template.metadata.annotations['prometheus.io/port'], String(port));
  assert.equal(dep.spec.template.metadata.annotations['prometheus.io/path'], '/metrics');
  for (const probe of ['startupProbe', 'readinessProbe']) {
    assert.equal(c[probe]?.httpGet?.path, '/health', `${probe} on /health`);
    assert.ok([port, 'http'].includes(c[probe].httpGet.port), `${probe}'s port`);
  }
  assert.ok(c.livenessProbe, 'a liveness probe');
  for (const r of ['cpu', 'memory']) assert.ok(c.resources.requests[r], `resources.requests.${r}`);
  assert.equal(c.resources.limits.memory, c.resources.requests.memory, 'memory limit = request');
  assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.ok(c.volumeMounts.every((m) => m.readOnly), 'the model is mounted read-only');
  // Longer than the drain, so requests in flight finish before the kill.
  const drain = c.args.includes('--drain-timeout') ? Number(arg(c.args, '--drain-timeout')) : 10;
  assert.ok(dep.spec.template.spec.terminationGracePeriodSeconds > drain, 'grace period > --drain-timeout');
  assert.equal(svc.spec.ports[0].targetPort, 'http');

  assert.equal(hpa.spec.scaleTargetRef.kind, 'Deployment');
  assert.equal(hpa.spec.scaleTargetRef.name, dep.metadata.name);
  assert.ok(hpa.spec.minReplicas >= 1 && hpa.spec.maxReplicas >= hpa.spec.minReplicas);
  // The metric the HPA scales on is one /metrics serves, as a gauge.
  const res = await fetch(`${replica.url}/metrics`, { headers: { Authorization: `Bearer ${KEY}` } });
  const text = await res.text();
  for (const m of hpa.spec.metrics) {
    const name = m.pods.metric.name;
    assert.match(text, new RegExp(`^# TYPE ${name} gauge$`, 'm'), `/metrics serves ${name} as a gauge`);
  }
});
