#!/usr/bin/env -S node --max-semi-space-size=64
// node's flag sizes the young generation, which V8 fixes at startup (controller/heap-tuning.ts).
// Thin launcher: the CLI is TypeScript compiled to dist/ by `npm run build` (also run by `npm ci`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/controller/cli/weft.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('weft: not built yet; run `npm ci` (or `npm run build`) in the weft checkout first\n');
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
