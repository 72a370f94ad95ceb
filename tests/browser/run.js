// The CTest entry point: checks that what the browser tests need is installed (one line
// naming the script that installs it otherwise), then runs them with Node's runner.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const missing = [];
if (!existsSync(chromium)) missing.push(chromium + ' (Debian package chromium)');
if (!existsSync(join(here, 'node_modules', 'puppeteer-core'))) {
  missing.push('tests/browser/node_modules (npm ci)');
}
for (const v of ['LLAMA_SERVER', 'LLAMA_MODELS_DIR', 'LLAMA_GATE_PLUGIN', 'LLAMA_ARTIFACTS_DIR']) {
  if (!process.env[v]) missing.push('the environment variable ' + v + ' (set by CTest)');
}
if (missing.length > 0) {
  console.error('browser tests: missing ' + missing.join(', ') + '; run scripts/install-deps.sh');
  process.exit(1);
}
const model = join(process.env.LLAMA_MODELS_DIR, 'stories1M.bin');
if (!existsSync(model)) {
  console.error('browser tests: missing the test model ' + model + ' (LLAMA_MODELS_DIR)');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', join(here, 'chat_page.test.js')],
  { stdio: 'inherit', cwd: here });
process.exit(r.status ?? 1);
