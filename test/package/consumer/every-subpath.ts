// Type-checked by test/package.test.ts in a project that installed the packed package, with a strict tsconfig,
// `skipLibCheck: false` and no `@types/pg`: copied there once as ESM (.mts) and once as CommonJS (.cts).
import { CheckpointManager, RewindableError, type RewindFilesResult } from 'rewindable';
import { memoryStorage } from 'rewindable/storage/memory';
import { postgresStorage, type PostgresStorage } from 'rewindable/storage/postgres';
import { mirroredStorage } from 'rewindable/storage/mirror';
import { runStorageConformance } from 'rewindable/testing';
import { fileTools } from 'rewindable/ai-sdk';
import * as claudeAgentSdk from 'rewindable/claude-agent-sdk';
import * as openaiAgents from 'rewindable/openai-agents';
import * as langchain from 'rewindable/langchain';

export const storage: PostgresStorage = postgresStorage({ connection: { connectionString: 'postgres://localhost/app', max: 4, idleTimeoutMillis: 1000 } });
export const rewound = (result: RewindFilesResult): number | undefined => result.insertions;
export const everySubpath = [CheckpointManager, RewindableError, memoryStorage, mirroredStorage, runStorageConformance, fileTools, claudeAgentSdk, openaiAgents, langchain];
