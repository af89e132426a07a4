#!/usr/bin/env -S node --max-semi-space-size=32
// The published entry point runs the compiled CLI (built by `npm run build`, which `npm ci` runs via `prepare`).
// --max-semi-space-size: a 32 MiB young generation; under load the simulator allocates fast and
// scavenges about half as often with it (bench/README.md, "History").
import '../dist/cli/main.js';
