// Processes for the replica tests (replicas.test.mjs): llama-server replicas on
// stories1M behind Debian's nginx running deploy/nginx/llama-proxy.conf verbatim.
// Paths come from the environment CTest sets (tests/CMakeLists.txt); a missing one
// fails the test with a line that names it.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, chmodSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

export const KEY = 'replica-test-key';

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this test through ctest (tests/CMakeLists.txt)`);
  if (!existsSync(value)) throw new Error(`${name}=${value}: no such file`);
  return value;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `check` until it returns true; fails naming `what` after `ms`.
export async function waitFor(check, what, ms = 30_000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

// A process whose exit is a promise of its code (or signal name), with the last lines
// of its stderr kept for error messages.
class Process {
  constructor(command, args) {
    this.child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.log = [];
    readline.createInterface({ input: this.child.stderr }).on('line', (line) => {
      this.log.push(line);
      if (this.log.length > 20) this.log.shift();
    });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => resolve(code ?? signal));
    });
  }
  signal(name) { this.child.kill(name); }
  async kill() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

export class Replica extends Process {
  // A replica on `port` (0: a free one), ready when this resolves: /health says ok.
  static async start(port = 0) {
    const models = required('LLAMA_MODELS_DIR');
    const r = new Replica(required('LLAMA_SERVER'), [
      '-c', path.join(models, 'stories1M.bin'), '-k', path.join(models, 'tok2048.bin'),
      '--plugin', required('LLAMA_TEST_PACED_PLUGIN'), '-b', 'test-paced:graph', '-j', '1',
      '--parallel', '2', '--queue', '16', '--port', String(port), '--api-key', KEY,
      '--drain-timeout', '20']);
    const first = await new Promise((resolve, reject) => {
      const lines = readline.createInterface({ input: r.child.stdout });
      lines.once('line', resolve);
      r.exited.then((code) => reject(new Error(
        `llama-server exited (${code}) before listening: ${r.log.join(' | ')}`)));
    });
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)$/.exec(first);
    if (!m) throw new Error(`llama-server's first line is not its address: ${first}`);
    r.port = Number(m[1]);
    r.url = `http://127.0.0.1:${r.port}`;
    await waitFor(async () => (await fetch(`${r.url}/health`)).status === 200,
      `the replica on port ${r.port} to load`);
    return r;
  }

  // Sequences holding a request, from /slots.
  async busySequences() {
    const res = await fetch(`${this.url}/slots`, { headers: { Authorization: `Bearer ${KEY}` } });
    return (await res.json()).filter((s) => s.is_processing).length;
  }
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export class Nginx extends Process {
  // nginx on a free loopback port balancing over the replicas' ports.
  static async start(ports) {
    const nginx = process.env.NGINX ?? '/usr/sbin/nginx';
    if (!existsSync(nginx)) throw new Error(`${nginx}: nginx is not installed (scripts/install-deps.sh installs it)`);
    const proxy = path.join(required('LLAMA_SOURCE_DIR'), 'deploy/nginx/llama-proxy.conf');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'llama-nginx-'));
    // nginx started as root runs its workers as nobody: they write request bodies
    // under the prefix, so that directory is theirs to write.
    chmodSync(dir, 0o755);
    const temp = path.join(dir, 'temp');
    mkdirSync(temp, { mode: 0o777 });
    chmodSync(temp, 0o777);
    for (let attempt = 0; ; ++attempt) {
      const port = await freePort();
      // The upstream block is the one docs/deploy.md gives, with the test's ports.
      writeFileSync(path.join(dir, 'nginx.conf'), `
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${temp}/body;
  proxy_temp_path ${temp}/proxy;
  fastcgi_temp_path ${temp}/fastcgi;
  uwsgi_temp_path ${temp}/uwsgi;
  scgi_temp_path ${temp}/scgi;
  upstream llama_servers {
    least_conn;
${ports.map((p) => `    server 127.0.0.1:${p} max_fails=3 fail_timeout=2s;`).join('\n')}
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port};
    include ${proxy};
  }
}
`);
      const n = new Nginx(nginx, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e',
        path.join(dir, 'error.log'), '-g', 'daemon off;']);
      n.dir = dir;
      n.url = `http://127.0.0.1:${port}`;
      let code = null;
      n.exited.then((c) => { code = c; });
      await waitFor(async () => code !== null || (await fetch(`${n.url}/health`)).ok,
        `nginx on port ${port}`, 10_000);
      if (code === null) return n;
      const log = existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8') : '';
      if (attempt < 3 && /Address already in use/.test(log)) continue;  // the port was taken meanwhile
      throw new Error(`nginx exited (${code}): ${log.trim().split('\n').slice(-3).join(' | ')}`);
    }
  }

  errors() {
    const log = path.join(this.dir, 'error.log');
    return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').slice(-20).join('\n') : '';
  }

  async stop() {
    this.signal('SIGQUIT');
    await this.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
