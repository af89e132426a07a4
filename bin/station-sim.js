#!/usr/bin/env node
// The published entry point runs the compiled CLI (built by `npm run build`, which `npm ci` runs via `prepare`).
import '../dist/cli/main.js';
