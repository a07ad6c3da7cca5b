#!/usr/bin/env node
// The `mediaproof` program (server/package.json "bin"): runs src/main.ts through tsx, from any
// directory; DATA_DIR and other paths are taken relative to the caller's directory.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
