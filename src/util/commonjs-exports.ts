/**
 * What a CommonJS package exports, from its `import()`: under ESM it arrives
 * as `default`, and as the module itself once a bundler turned the import
 * into a `require` (our CommonJS build does).
 */
export function commonJsExports<Exports>(module: unknown): Exports {
  return (module as { default?: Exports }).default ?? (module as Exports);
}
