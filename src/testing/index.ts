export { runStorageConformance } from './storage-conformance.js';
export type { ConformanceTestApi, StorageConformanceOptions } from './storage-conformance.js';
export { faultyStorage } from './faulty-storage.js';
export type { FaultyStorage } from './faulty-storage.js';
