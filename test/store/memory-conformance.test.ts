import { describe, it } from 'vitest';
import { memoryStorage } from '../../src/store/memory/memory-storage.js';
import { runStorageConformance } from '../../src/testing/index.js';

runStorageConformance({ name: 'memory', create: () => memoryStorage(), describe, it });
