import { describe, expectTypeOf, it } from 'vitest';
import {
  RewindableError,
  type CheckpointManager,
  type CheckpointManagerOptions,
  type FileMerge,
  type RewindFileChange,
  type RewindableErrorCode,
  type RewindableErrorDetailsOf,
  type RewindFilesReady,
  type RewindFilesRefused,
  type RewindFilesResult,
  type RewindPartial,
  type RewindResult,
  type RewindSuccess,
  type SkippedPath,
  type SkipReason,
} from '../src/index.js';

declare const manager: CheckpointManager;
declare const result: RewindFilesResult;
declare const rewound: RewindResult;
declare const caught: unknown;

describe('rewindFiles results narrow on canRewind', () => {
  it('canRewind: true has every statistic set; false has the typed code and no statistics', () => {
    if (result.canRewind) {
      expectTypeOf(result).toEqualTypeOf<RewindFilesReady>();
      expectTypeOf(result.filesChanged).toEqualTypeOf<string[]>();
      expectTypeOf(result.insertions).toEqualTypeOf<number>();
      expectTypeOf(result.skippedByReason).toEqualTypeOf<Partial<Record<SkipReason, number>>>();
      expectTypeOf(result.skipped).toEqualTypeOf<SkippedPath[]>();
      expectTypeOf(result.error).toEqualTypeOf<undefined>();
    } else {
      expectTypeOf(result).toEqualTypeOf<RewindFilesRefused>();
      expectTypeOf(result.dryRun).toEqualTypeOf<true>();
      expectTypeOf(result.error).toEqualTypeOf<string>();
      expectTypeOf(result.errorCode).toEqualTypeOf<RewindableErrorCode>();
      expectTypeOf(result.errorDetails).toEqualTypeOf<RewindableErrorDetailsOf<RewindableErrorCode> | undefined>();
      expectTypeOf(result.filesChanged).toEqualTypeOf<undefined>();
    }
  });

  it('code written for the loose Claude SDK shape reads the fields without narrowing', () => {
    expectTypeOf(result.filesChanged).toEqualTypeOf<string[] | undefined>();
    expectTypeOf(result.insertions).toEqualTypeOf<number | undefined>();
    expectTypeOf(result.error).toEqualTypeOf<string | undefined>();
  });

  it('a real run resolves ready only; a dry run may be refused', () => {
    expectTypeOf(() => manager.rewindFiles('id')).returns.resolves.toEqualTypeOf<RewindFilesReady>();
    expectTypeOf(() => manager.rewindFiles('id', { dryRun: false, skipConflicts: true })).returns.resolves.toEqualTypeOf<RewindFilesReady>();
    expectTypeOf(() => manager.rewindFiles('id', { dryRun: true })).returns.resolves.toEqualTypeOf<RewindFilesResult>();
    expectTypeOf(() => manager.revertTurn('id', { onConflict: 'markers' })).returns.resolves.toEqualTypeOf<RewindFilesReady>();
    expectTypeOf(() => manager.revertTurn('id', { dryRun: true })).returns.resolves.toEqualTypeOf<RewindFilesResult>();
  });

  it('onConflict takes only its choices, and a merged file says how it merged', () => {
    // @ts-expect-error revertTurn has no 'merge': a revert always merges
    void manager.revertTurn('id', { onConflict: 'merge' });
    expectTypeOf<RewindFileChange['merge']>().toEqualTypeOf<FileMerge | undefined>();
    expectTypeOf<FileMerge['status']>().toEqualTypeOf<'clean' | 'conflict'>();
  });
});

describe('rewind results narrow on status', () => {
  it('each status has its own fields', () => {
    if (rewound.status === 'partial') expectTypeOf(rewound.failures).toEqualTypeOf<SkippedPath[]>();
    if (rewound.status === 'success') expectTypeOf(rewound.failures).toEqualTypeOf<undefined>();
    if (rewound.status === 'ready') expectTypeOf(rewound.dryRun).toEqualTypeOf<true>();
    if (rewound.status === 'rejected') {
      expectTypeOf(rewound.errorCode).toEqualTypeOf<RewindableErrorCode>();
      expectTypeOf(rewound.files).toEqualTypeOf<undefined>();
    } else {
      expectTypeOf(rewound.files).toEqualTypeOf<RewindFilesReady | undefined>();
    }
  });

  it('a real run resolves done only', () => {
    expectTypeOf(() => manager.rewind('id', { scope: 'files' })).returns.resolves.toEqualTypeOf<RewindSuccess | RewindPartial>();
    expectTypeOf(() => manager.rewind('id', { dryRun: true })).returns.resolves.toEqualTypeOf<RewindResult>();
  });
});

describe('RewindableError details are typed by code', () => {
  it('hasCode narrows details to the code', () => {
    if (RewindableError.hasCode(caught, 'FILE_IO')) {
      expectTypeOf(caught.code).toEqualTypeOf<'FILE_IO'>();
      expectTypeOf(caught.details!.path).toEqualTypeOf<string>();
    }
    if (RewindableError.hasCode(caught, 'CHECKPOINT_IN_OTHER_SESSION')) expectTypeOf(caught.details!.sessionId).toEqualTypeOf<string>();
  });

  it('without a code every field still reads, as unknown', () => {
    if (RewindableError.isInstance(caught)) {
      expectTypeOf(caught.code).toEqualTypeOf<RewindableErrorCode>();
      expectTypeOf(caught.details?.path).toEqualTypeOf<unknown>();
    }
  });

  it('a thrown code takes only its own details', () => {
    new RewindableError('FILE_IO', 'message', { details: { path: '/abs/file' } });
    // @ts-expect-error FILE_IO details name the path
    new RewindableError('FILE_IO', 'message', { details: { path: 1 } });
  });
});

describe('one session option', () => {
  it('takes one choice per value', () => {
    expectTypeOf<{ cwd: string; session: { id: string } }>().toExtend<CheckpointManagerOptions>();
    expectTypeOf<{ cwd: string; session: { resume: string; readOnly: true } }>().toExtend<CheckpointManagerOptions>();
    expectTypeOf<{ cwd: string; session: 'continue' }>().toExtend<CheckpointManagerOptions>();
    expectTypeOf<{ cwd: string; session: { id: string; resume: string } }>().not.toExtend<CheckpointManagerOptions>();
    expectTypeOf<{ cwd: string; session: { id: string; readOnly: true } }>().not.toExtend<CheckpointManagerOptions>();
  });
});
