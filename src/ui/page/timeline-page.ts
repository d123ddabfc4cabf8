/// <reference lib="dom" />
/**
 * The timeline page: sessions → a session's timeline → a checkpoint's
 * rewind preview → a file's diff, then rewind and undo. Each view is an
 * address after `#`, so Back, Forward and bookmarks work, and each is built
 * from one or two JSON answers of the server.
 */
import type { PlanPreviewResponse, PreviewFile, PreviewResponse, RewindResponse, TimelineCheckpoint, TimelineResponse } from '../timeline-types.js';
import { api, ApiError } from './api-client.js';
import { diffTable, noTextDiff, type DiffLayout, type HunkControl } from './diff-view.js';
import { displayPath, firstLine, formatBytes, formatTime, h, plural } from './dom.js';
import { askToRewind } from './rewind-dialog.js';
import { forgetSelection, selectionOf, type Selection } from './selection.js';

const view = document.getElementById('view') as HTMLElement;
const crumbs = document.getElementById('crumbs') as HTMLElement;
/** Files named on a timeline row before the rest are summed up as "+N more". */
const filesShown = 4;
let layout: DiffLayout = localStorage.getItem('rewindable-diff-layout') === 'split' ? 'split' : 'unified';

type Route =
  | { name: 'sessions' }
  | { name: 'timeline'; sessionId: string }
  | { name: 'preview'; sessionId: string; checkpointId: string }
  | { name: 'revert'; sessionId: string; checkpointId: string }
  | { name: 'diff'; sessionId: string; checkpointId: string; file: string };

function parseRoute(hash: string): Route {
  const [, s, sessionId, c, checkpointId, f, file] = hash.replace(/^#/, '').split('/').map(decodeURIComponent);
  if (s === 's' && sessionId) {
    if (c === 'c' && checkpointId) {
      if (f === 'f' && file) return { name: 'diff', sessionId, checkpointId, file };
      if (f === 'revert') return { name: 'revert', sessionId, checkpointId };
      return { name: 'preview', sessionId, checkpointId };
    }
    return { name: 'timeline', sessionId };
  }
  return { name: 'sessions' };
}

const link = {
  timeline: (sessionId: string) => `#/s/${encodeURIComponent(sessionId)}`,
  preview: (sessionId: string, checkpointId: string) => `${link.timeline(sessionId)}/c/${encodeURIComponent(checkpointId)}`,
  diff: (sessionId: string, checkpointId: string, file: string) => `${link.preview(sessionId, checkpointId)}/f/${encodeURIComponent(file)}`,
  revert: (sessionId: string, checkpointId: string) => `${link.preview(sessionId, checkpointId)}/revert`,
};

/** Renders the view the address names; a later navigation wins over a slower earlier one. */
let rendering = 0;
async function render(): Promise<void> {
  const route = parseRoute(location.hash);
  const ticket = ++rendering;
  setCrumbs(route);
  let content: Node[];
  try {
    content = await viewOf(route);
  } catch (error) {
    content = [h('h1', { tabindex: -1 }, 'Something went wrong'), errorBox(error)];
  }
  if (ticket !== rendering) return;
  view.replaceChildren(...content);
  view.setAttribute('aria-busy', 'false');
  // For the benchmark of first paint: the frame that draws the view, on the page's own clock.
  requestAnimationFrame(() => performance.mark('rewindable:view-drawn'));
  // Keyboard and screen-reader users land on the new view's heading, as after a page load.
  (view.querySelector('h1') ?? view).focus();
}

function viewOf(route: Route): Promise<Node[]> {
  view.setAttribute('aria-busy', 'true');
  switch (route.name) {
    case 'sessions':
      return sessionsView();
    case 'timeline':
      return timelineView(route.sessionId);
    case 'preview':
      return previewView(route.sessionId, route.checkpointId);
    case 'diff':
      return diffView(route.sessionId, route.checkpointId, route.file);
    case 'revert':
      return revertView(route.sessionId, route.checkpointId);
  }
}

function setCrumbs(route: Route): void {
  const items: Node[] = [h('a', { href: '#/' }, 'Sessions')];
  if (route.name !== 'sessions') items.push(h('a', { href: link.timeline(route.sessionId) }, `Session ${route.sessionId.slice(0, 8)}`));
  if (route.name === 'preview' || route.name === 'diff') items.push(h('a', { href: link.preview(route.sessionId, route.checkpointId) }, `Checkpoint ${route.checkpointId.slice(0, 8)}`));
  if (route.name === 'diff') items.push(h('span', {}, route.file.split('/').pop() ?? route.file));
  if (route.name === 'revert') items.push(h('span', {}, 'Revert this turn'));
  const last = items[items.length - 1] as HTMLElement;
  last.setAttribute('aria-current', 'page');
  crumbs.replaceChildren(h('ol', {}, items.map((item) => h('li', {}, item))));
}

async function sessionsView(): Promise<Node[]> {
  const { cwd, sessions } = await api.sessions();
  const heading = h('h1', { tabindex: -1 }, plural(sessions.length, 'session'), h('span', { class: 'muted' }, ` of ${cwd}`));
  if (sessions.length === 0) return [heading, h('p', {}, 'No sessions are recorded for this project yet.')];
  const rows = sessions.map((session) => {
    const damaged = session.damaged !== undefined;
    return h(
      'tr',
      { class: damaged ? 'damaged' : undefined },
      h(
        'td',
        {},
        h('a', { href: link.timeline(session.sessionId), class: 'prompt' }, session.firstPrompt !== undefined ? firstLine(session.firstPrompt) : '(no prompt recorded)'),
        h('div', { class: 'muted mono' }, session.sessionId),
        session.forkedFrom !== undefined &&
          h('div', { class: 'muted' }, 'Forked from ', h('a', { href: link.preview(session.forkedFrom.sessionId, session.forkedFrom.messageId) }, `session ${session.forkedFrom.sessionId.slice(0, 8)}`)),
        damaged && h('div', { class: 'warning' }, `Damaged (${session.damaged!.code}): ${session.damaged!.message}`),
        session.interruptedRewind !== undefined &&
          h('div', { class: 'warning' }, `A rewind interrupted at ${formatTime(session.interruptedRewind.at)} left files half rewound; the next rewind from here rolls it back first.`),
      ),
      h('td', {}, h('time', { datetime: session.lastActivity }, formatTime(session.lastActivity))),
      h('td', { class: 'count' }, damaged ? 'damaged' : String(session.checkpoints)),
      h('td', { class: 'count' }, damaged ? '–' : String(session.trackedFiles)),
      h('td', { class: 'count' }, session.bytes !== undefined ? formatBytes(session.bytes) : ''),
    );
  });
  return [
    heading,
    h(
      'table',
      { class: 'list' },
      h('caption', { class: 'visually-hidden' }, 'Sessions, most recently active first'),
      h('thead', {}, h('tr', {}, ...['First prompt', 'Last activity', 'Checkpoints', 'Files', 'Size'].map((title) => h('th', { scope: 'col' }, title)))),
      h('tbody', {}, rows),
    ),
  ];
}

async function timelineView(sessionId: string): Promise<Node[]> {
  const timeline = await api.timeline(sessionId);
  const messages = timeline.checkpoints.filter((checkpoint) => checkpoint.reason === 'message').length;
  const heading = h('h1', { tabindex: -1 }, `Session ${timeline.sessionId}`);
  const summary = h('p', { class: 'muted' }, `${plural(messages, 'user message')}, ${plural(timeline.checkpoints.length - messages, 'undo point')} · ${timeline.cwd}`);
  const items = timeline.checkpoints.map((checkpoint, index) => timelineItem(timeline, checkpoint, index));
  return [heading, summary, h('ol', { class: 'timeline' }, items), ...branchesSection(timeline)];
}

function timelineItem(timeline: TimelineResponse, checkpoint: TimelineCheckpoint, index: number): HTMLLIElement {
  const undoPoint = checkpoint.reason === 'pre-rewind';
  const title = undoPoint ? 'Undo point (the files just before a rewind)' : checkpoint.prompt !== undefined ? firstLine(checkpoint.prompt) : '(no prompt recorded)';
  const touched = checkpoint.touched ?? [];
  return h(
    'li',
    { class: `${undoPoint ? 'undo-point' : 'message'}${checkpoint.onActiveBranch ? '' : ' old-branch'}` },
    h(
      'div',
      { class: 'row' },
      h('span', { class: 'index' }, `#${index + 1}`),
      h('time', { datetime: checkpoint.createdAt }, formatTime(checkpoint.createdAt)),
      h('span', { class: `badge ${undoPoint ? 'undo' : 'message'}` }, undoPoint ? 'undo point' : 'message'),
      !checkpoint.onActiveBranch && h('span', { class: 'badge branch' }, 'rewound branch'),
    ),
    h('a', { href: link.preview(timeline.sessionId, checkpoint.id), class: 'prompt' }, title),
    h('div', { class: 'muted mono' }, checkpoint.id),
    // A turn begins at a user message; an undo point begins none.
    !undoPoint && h('p', {}, h('a', { href: link.revert(timeline.sessionId, checkpoint.id), class: 'revert' }, 'Revert this turn…')),
    touched.length > 0 &&
      h(
        'p',
        { class: 'touched' },
        `This turn touched ${plural(touched.length, 'file')}: `,
        touched
          .slice(0, filesShown)
          .map((file) => displayPath(file, timeline.cwd))
          .join(', '),
        touched.length > filesShown ? ` +${touched.length - filesShown} more` : '',
      ),
    h('p', { class: 'muted' }, `Holds ${plural(checkpoint.fileCount, 'tracked file')}.`),
  );
}

function branchesSection(timeline: TimelineResponse): Node[] {
  if (timeline.branches.length === 0) return [];
  return [
    h('h2', {}, 'Other branches of the conversation'),
    h('p', { class: 'muted' }, 'A conversation rewind or a fork leaves the old branch readable; its messages are listed here.'),
    h(
      'ul',
      { class: 'branches' },
      timeline.branches.map((branch) =>
        h(
          'li',
          {},
          h('p', {}, `${plural(branch.length, 'message')}, last at `, h('time', { datetime: branch.lastTimestamp }, formatTime(branch.lastTimestamp))),
          h(
            'ol',
            {},
            branch.userMessages.map((message) => h('li', {}, h('a', { href: link.preview(timeline.sessionId, message.uuid) }, message.text !== undefined ? firstLine(message.text) : message.uuid))),
          ),
        ),
      ),
    ),
  ];
}

/** Said above a preview drawn again because the files changed after the one the user was shown. */
const planChangedNotice = 'The files changed since the preview you saw: nothing was rewound. This is what a rewind would do now; confirm again to rewind.';

async function previewView(sessionId: string, checkpointId: string): Promise<Node[]> {
  return previewContent(await api.preview(sessionId, checkpointId));
}

/**
 * Draws the preview again with a notice, and asks again: the plan the user
 * confirmed is no longer the one a rewind would carry out.
 */
function redrawPreview(preview: PreviewResponse, ask: 'all' | 'selected' = 'all'): void {
  rendering++;
  view.replaceChildren(...previewContent(preview, planChangedNotice));
  (view.querySelector('h1') ?? view).focus();
  view.querySelector<HTMLButtonElement>(`.actions button.${ask === 'all' ? 'danger' : 'selected'}:not([disabled])`)?.click();
}

function previewContent(preview: PreviewResponse, notice?: string): Node[] {
  const { sessionId } = preview;
  const at = `${preview.kind} ${preview.checkpointId}`;
  const { counts } = preview;
  const heading = h('h1', { tabindex: -1 }, `Rewind to ${at}`);
  const prompt = preview.prompt !== undefined ? h('blockquote', {}, preview.prompt) : undefined;
  const changed = preview.files.filter((file) => file.action !== 'skip');
  const leftAlone = preview.files.filter((file) => file.action === 'skip');
  const summary =
    changed.length === 0
      ? h('p', {}, leftAlone.length > 0 ? `A rewind would change nothing: ${plural(leftAlone.length, 'tracked file')} cannot be put back and would be left alone.` : `Nothing to rewind: the files already match ${at}.`)
      : h('p', { class: 'summary' }, `A rewind to ${at} would change `, h('strong', {}, plural(counts.files, 'file')), ' (', h('span', { class: 'plus' }, `+${counts.insertions}`), ' ', h('span', { class: 'minus' }, `−${counts.deletions}`), '):');
  const result = h('section', { class: 'result', 'aria-live': 'polite' });
  const button = h('button', { type: 'button', class: 'danger', disabled: changed.length === 0 }, 'Rewind…');
  button.addEventListener('click', () => {
    void (async () => {
      button.disabled = true;
      // The dialog repeats what a rewind would do now, not what it would have done when this view was drawn.
      let fresh: PreviewResponse;
      try {
        fresh = await api.preview(sessionId, preview.checkpointId);
      } catch (error) {
        button.disabled = false;
        result.replaceChildren(errorBox(error));
        return;
      }
      if (fresh.plan !== preview.plan) return redrawPreview(fresh);
      const scope = await askToRewind(fresh.counts, fresh.conversationRewindable);
      button.focus();
      if (scope === undefined) {
        button.disabled = false;
        return;
      }
      await showOutcome(result, () => api.rewind(sessionId, fresh.checkpointId, scope, fresh.plan), sessionId, {
        onPlanChanged: async () => redrawPreview(await api.preview(sessionId, fresh.checkpointId)),
        onDone: () => forgetSelection(sessionId, fresh.checkpointId),
      });
    })();
  });
  const selection = selectionOf(sessionId, preview.checkpointId);
  selection.update(preview.files);
  const selected = h('button', { type: 'button', class: 'selected', disabled: true }, 'Rewind selected…');
  const chosen = h('p', { class: 'muted selection', 'aria-live': 'polite' });
  const showChoice = () => {
    chosen.textContent = selectionText(selection, changed.length, preview.cwd);
    selected.disabled = selection.isEverything();
    // With some files or hunks left out, the other button still rewinds everything: its name says so.
    button.textContent = selection.isEverything() ? 'Rewind…' : 'Rewind all…';
  };
  showChoice();
  selected.addEventListener('click', () => void rewindSelected(preview, selection, selected, result));
  const parts = [
    heading,
    prompt ?? h('p', { class: 'muted' }, '(no prompt recorded)'),
    summary,
    changed.length > 0 && filesTable(sessionId, preview.checkpointId, preview.cwd, changed, selection, showChoice),
    changed.length > 0 && chosen,
    leftAlone.length > 0 && h('h2', {}, `Left alone (${leftAlone.length})`),
    leftAlone.length > 0 && h('ul', { class: 'left-alone' }, leftAlone.map((file) => h('li', {}, file.action === 'skip' ? `${displayPath(file.path, preview.cwd)}: ${file.message}` : ''))),
    h('div', { class: 'actions' }, button, changed.length > 0 && selected),
    result,
  ];
  if (notice !== undefined) parts.splice(1, 0, h('p', { class: 'warning', role: 'alert' }, notice));
  return parts.filter((part): part is HTMLElement => part !== false);
}

/** "Selected: 1 of 4 files; 1 of 2 hunks of notes.txt." */
function selectionText(selection: Selection, of: number, cwd: string): string {
  if (selection.isEverything()) return `Selected: all ${plural(of, 'file')}. Uncheck files here, or hunks in a file's diff, to rewind only some.`;
  const { files, partial } = selection.chosen();
  const hunks = partial.map((entry) => `${entry.chosen} of ${plural(entry.of, 'hunk')} of ${displayPath(entry.file.path, cwd)}`);
  return `Selected: ${files.length} of ${plural(of, 'file')}${hunks.length > 0 ? `; ${hunks.join(', ')}` : ''}.`;
}

/**
 * "Rewind selected": the dialog repeats a fresh dry run of the selection,
 * and the rewind carries that dry run's plan. When the whole preview
 * changed meanwhile, the preview is drawn again and the user asked again.
 */
async function rewindSelected(preview: PreviewResponse, selection: Selection, button: HTMLButtonElement, result: HTMLElement): Promise<void> {
  const { sessionId, checkpointId } = preview;
  const request = selection.request(preview.cwd);
  if ('problem' in request) {
    result.replaceChildren(h('p', { class: 'warning', role: 'alert' }, request.problem));
    return;
  }
  button.disabled = true;
  let planned: PlanPreviewResponse;
  try {
    const fresh = await api.preview(sessionId, checkpointId);
    if (fresh.plan !== preview.plan) return redrawPreview(fresh, 'selected');
    planned = await api.previewSelected(sessionId, checkpointId, request);
  } catch (error) {
    button.disabled = false;
    result.replaceChildren(errorBox(error));
    return;
  }
  const scope = await askToRewind(planned.counts, false);
  button.focus();
  if (scope === undefined) {
    button.disabled = false;
    return;
  }
  await showOutcome(result, () => api.rewindSelected(sessionId, checkpointId, request, planned.plan), sessionId, {
    onPlanChanged: async () => redrawPreview(await api.preview(sessionId, checkpointId), 'selected'),
    onDone: () => forgetSelection(sessionId, checkpointId),
  });
}

function filesTable(sessionId: string, checkpointId: string, cwd: string, files: PreviewFile[], selection: Selection, onChoice: () => void): HTMLTableElement {
  return h(
    'table',
    { class: 'list files' },
    h('caption', { class: 'visually-hidden' }, 'Files the rewind would change'),
    h('thead', {}, h('tr', {}, ...['Rewind', 'Action', 'Lines', 'File', 'Note'].map((title) => h('th', { scope: 'col' }, title)))),
    h(
      'tbody',
      {},
      files.map((file) => {
        if (file.action === 'skip') return h('tr');
        const lines = file.binary ? 'binary' : file.statsSkipped ? '?' : `+${file.insertions} −${file.deletions}`;
        const notes = [file.conflict ? 'changed since the agent last wrote it' : '', file.tooLarge ? 'too large to show' : '', file.tooComplex ? 'too complex to show' : ''].filter((note) => note !== '');
        const box = h('input', { type: 'checkbox', checked: selection.hasFile(file.path) });
        box.addEventListener('change', () => {
          selection.setFile(file.path, box.checked);
          onChoice();
        });
        return h(
          'tr',
          { class: file.conflict ? 'conflict' : undefined },
          h('td', { class: 'choose' }, h('label', {}, box, h('span', { class: 'visually-hidden' }, `Include ${displayPath(file.path, cwd)}`))),
          h('td', {}, h('span', { class: `action ${file.action}` }, file.action)),
          h('td', { class: 'count' }, lines),
          h('td', {}, h('a', { href: link.diff(sessionId, checkpointId, file.path), class: 'mono' }, displayPath(file.path, cwd))),
          h('td', { class: notes.length > 0 ? 'warning' : undefined }, notes.join('; ')),
        );
      }),
    ),
  );
}

interface OutcomeOptions {
  /** A refusal because the plan changed: show the new one. */
  onPlanChanged?: () => Promise<void>;
  /** Once it is done: what the page kept for the old plan is stale. */
  onDone?: () => void;
  /** The undo button's words. @default 'Undo this rewind' */
  undoLabel?: string;
}

/**
 * Runs a rewind or an undo and shows its report as the CLI prints it, with
 * the way back. A rewind the server refused because its plan changed goes
 * to `onPlanChanged`, which shows the new plan.
 */
async function showOutcome(into: HTMLElement, run: () => Promise<RewindResponse>, sessionId: string, options: OutcomeOptions = {}): Promise<void> {
  const { onPlanChanged } = options;
  into.replaceChildren(h('p', { class: 'muted' }, 'Working…'));
  let outcome: RewindResponse;
  try {
    outcome = await run();
  } catch (error) {
    if (onPlanChanged !== undefined && error instanceof ApiError && error.code === 'PLAN_CHANGED') {
      return onPlanChanged().catch((failure: unknown) => void into.replaceChildren(errorBox(failure)));
    }
    into.replaceChildren(errorBox(error));
    return;
  }
  options.onDone?.();
  const heading = h('h2', { tabindex: -1 }, outcome.status === 'partial' ? 'Done, with files left alone' : 'Done');
  const report = h('pre', { class: 'report' }, outcome.report.join('\n'));
  const undoId = outcome.undoCheckpointId;
  const undo = undoId !== undefined ? h('button', { type: 'button' }, options.undoLabel ?? 'Undo this rewind') : undefined;
  undo?.addEventListener('click', () => {
    undo.disabled = true;
    const next = h('section', { class: 'result', 'aria-live': 'polite' });
    into.appendChild(next);
    void showOutcome(next, () => api.undo(sessionId, undoId!), sessionId);
  });
  into.replaceChildren(heading, report, h('div', { class: 'actions' }, undo, h('a', { href: link.timeline(sessionId) }, 'Back to the timeline')));
  heading.focus();
}

/** What a revert does to a file whose later changes overlap the turn's, as `revertTurn`'s `onConflict` names it. */
const revertChoices: ReadonlyArray<[string, string]> = [
  ['skip', 'leave the file as it is'],
  ['markers', 'write the merge with conflict markers'],
  ['overwrite', 'put back its version from before the turn, discarding the later changes'],
];
/** The choice made on each turn's revert view while the page is open. */
const revertChoice = new Map<string, string>();

async function revertView(sessionId: string, checkpointId: string): Promise<Node[]> {
  const onConflict = revertChoice.get(`${sessionId}/${checkpointId}`) ?? 'skip';
  return revertContent(await api.previewRevert(sessionId, checkpointId, onConflict), onConflict);
}

/** Draws the revert's dry run anew (another conflict choice, or files changed since), keeping the focus where the reader was. */
function redrawRevert(plan: PlanPreviewResponse, onConflict: string, notice?: string, ask = false): void {
  rendering++;
  view.replaceChildren(...revertContent(plan, onConflict, notice));
  const focus = notice !== undefined ? view.querySelector('h1') : view.querySelector<HTMLInputElement>('input[name="onConflict"]:checked');
  (focus ?? view).focus();
  if (ask) view.querySelector<HTMLButtonElement>('.actions button.danger:not([disabled])')?.click();
}

/**
 * A revert of one turn: its dry run as `rewindable revert --dry-run` prints
 * it, the conflict choice, and the Revert button, which confirms and
 * checks the plan as a rewind does.
 */
function revertContent(plan: PlanPreviewResponse, onConflict: string, notice?: string): Node[] {
  const { sessionId, checkpointId, counts } = plan;
  const turn = `the turn of ${plan.kind} ${checkpointId}`;
  const heading = h('h1', { tabindex: -1 }, `Revert ${turn}`);
  const about = h('p', {}, 'Undoes what this turn did to the files and keeps every change made after it, as git revert does: each file the turn changed is merged with the later changes.');
  const choices = h(
    'fieldset',
    { class: 'choice' },
    h('legend', {}, "A file whose later changes overlap the turn's:"),
    revertChoices.map(([value, meaning]) => {
      const radio = h('input', { type: 'radio', name: 'onConflict', value, checked: value === onConflict });
      radio.addEventListener('change', () => {
        revertChoice.set(`${sessionId}/${checkpointId}`, value);
        // Choices made in quick succession: only the last one's dry run is drawn.
        const ticket = rendering;
        void api.previewRevert(sessionId, checkpointId, value).then(
          (next) => void (ticket === rendering && revertChoice.get(`${sessionId}/${checkpointId}`) === value && redrawRevert(next, value)),
          (error: unknown) => void result.replaceChildren(errorBox(error)),
        );
      });
      return h('label', {}, radio, ' ', h('code', {}, value), `: ${meaning}`);
    }),
  );
  const summary =
    counts.files === 0
      ? h('p', {}, counts.leftAlone > 0 ? `A revert would change nothing: ${plural(counts.leftAlone, 'file')} would be left alone.` : `Nothing to revert: no file holds a change of ${turn}.`)
      : h('p', { class: 'summary' }, 'A revert would change ', h('strong', {}, plural(counts.files, 'file')), ' (', h('span', { class: 'plus' }, `+${counts.insertions}`), ' ', h('span', { class: 'minus' }, `−${counts.deletions}`), '):');
  const report = h('pre', { class: 'report', 'aria-label': 'What a revert would do, as rewindable revert --dry-run prints it' }, plan.report.join('\n'));
  const result = h('section', { class: 'result', 'aria-live': 'polite' });
  const button = h('button', { type: 'button', class: 'danger', disabled: counts.files === 0 }, 'Revert…');
  button.addEventListener('click', () => {
    void (async () => {
      button.disabled = true;
      let fresh: PlanPreviewResponse;
      try {
        fresh = await api.previewRevert(sessionId, checkpointId, onConflict);
      } catch (error) {
        button.disabled = false;
        result.replaceChildren(errorBox(error));
        return;
      }
      if (fresh.plan !== plan.plan) return redrawRevert(fresh, onConflict, planChangedNotice, true);
      const confirmed = await askToRewind(fresh.counts, false, { verb: 'revert', onConflict });
      button.focus();
      if (confirmed === undefined) {
        button.disabled = false;
        return;
      }
      await showOutcome(result, () => api.revert(sessionId, checkpointId, onConflict, fresh.plan), sessionId, {
        onPlanChanged: async () => redrawRevert(await api.previewRevert(sessionId, checkpointId, onConflict), onConflict, planChangedNotice, true),
        undoLabel: 'Undo this revert',
      });
    })();
  });
  const parts: Node[] = [heading, about, choices, summary, report, h('div', { class: 'actions' }, button, h('a', { href: link.preview(sessionId, checkpointId) }, 'Rewind to this checkpoint instead')), result];
  if (notice !== undefined) parts.splice(1, 0, h('p', { class: 'warning', role: 'alert' }, notice));
  return parts;
}

async function diffView(sessionId: string, checkpointId: string, file: string): Promise<Node[]> {
  const { file: diff, cwd, path } = await api.diff(sessionId, checkpointId, file);
  const heading = h('h1', { tabindex: -1, class: 'mono' }, displayPath(path, cwd));
  const back = h('p', {}, h('a', { href: link.preview(sessionId, checkpointId) }, '← Back to the preview'));
  if (diff === null) return [heading, h('p', {}, 'The file is the same now as at this checkpoint: a rewind leaves it as it is.'), back];
  const facts =
    diff.action === 'skip'
      ? h('p', { class: 'warning' }, `Left alone: ${diff.message}`)
      : h(
          'p',
          { class: 'summary' },
          h('span', { class: `action ${diff.action}` }, diff.action),
          ' ',
          diff.binary ? 'binary' : h('span', {}, h('span', { class: 'plus' }, `+${diff.insertions}`), ' ', h('span', { class: 'minus' }, `−${diff.deletions}`)),
          diff.conflict ? h('span', { class: 'warning' }, ' · changed since the agent last wrote it') : '',
        );
  const reason = noTextDiff(diff);
  if (reason !== undefined || diff.action === 'skip' || diff.patch === undefined) return [heading, facts, h('p', { class: 'flag' }, reason ?? ''), back];
  const patch = diff.patch;
  const selection = selectionOf(sessionId, checkpointId);
  const ids = diff.hunks?.map((hunk) => hunk.id) ?? [];
  selection.noteHunks(path, ids);
  const hunkControl: HunkControl = (index, header) => {
    const id = ids[index];
    if (id === undefined) return undefined;
    const box = h('input', { type: 'checkbox', checked: selection.hasHunk(path, id), 'data-hunk': id });
    box.addEventListener('change', () => {
      selection.setHunk(path, id, box.checked);
      // Leaving out a file's last hunk leaves out the file; the other boxes say so too.
      holder.querySelectorAll<HTMLInputElement>('input[data-hunk]').forEach((other) => (other.checked = selection.hasHunk(path, other.dataset.hunk!)));
    });
    return h('label', { class: 'hunk-toggle' }, box, ' Rewind this hunk', h('span', { class: 'visually-hidden' }, ` ${header.replace(/ @@.*$/, ' @@')}`));
  };
  const holder = h('div', { class: 'diff-holder' }, diffTable(patch, layout, hunkControl));
  const toggle = (choice: DiffLayout, label: string) => {
    const button = h('button', { type: 'button', 'aria-pressed': String(layout === choice) }, label);
    button.addEventListener('click', () => {
      layout = choice;
      localStorage.setItem('rewindable-diff-layout', choice);
      switcher.querySelectorAll('button').forEach((other) => other.setAttribute('aria-pressed', String(other === button)));
      holder.replaceChildren(diffTable(patch, layout, hunkControl));
    });
    return button;
  };
  const switcher = h('div', { class: 'switcher', role: 'group', 'aria-label': 'Diff layout' }, toggle('unified', 'Unified'), toggle('split', 'Side by side'));
  const legend = h(
    'p',
    { class: 'muted' },
    'Red: the file now, which a rewind removes. Green: the file at the checkpoint, which a rewind puts back. ',
    ids.length > 0 ? 'Uncheck a hunk to leave it out of "Rewind selected…" on the preview.' : '',
  );
  return [heading, facts, switcher, legend, holder, back];
}

function errorBox(error: unknown): HTMLElement {
  const code = error instanceof ApiError ? error.code : 'UNEXPECTED';
  const message = error instanceof Error ? error.message : String(error);
  return h('div', { class: 'error', role: 'alert' }, h('strong', {}, code), ': ', message);
}

window.addEventListener('hashchange', () => void render());
void render();
