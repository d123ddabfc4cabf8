#!/usr/bin/env node
// Placeholder entry point: implemented by its own issue.
export {};
