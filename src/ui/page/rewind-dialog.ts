/// <reference lib="dom" />
import type { PreviewResponse } from '../timeline-types.js';
import { plural } from './dom.js';

export type RewindScopeChoice = 'files' | 'conversation' | 'both';

/** What the dialog confirms: a rewind (whole or of a selection), or a revert of one turn with its conflict choice. */
export type Confirming = { verb: 'rewind' } | { verb: 'revert'; onConflict: string };

/** The sentence the confirmation repeats from the preview. */
export function confirmationText(counts: PreviewResponse['counts'], confirming: Confirming = { verb: 'rewind' }): string {
  const verb = confirming.verb === 'rewind' ? 'Rewind' : 'Revert';
  const parts = [`${verb} ${plural(counts.files, 'file')} (+${counts.insertions} −${counts.deletions})?`];
  const them = counts.conflicts === 1 ? 'it' : 'them';
  if (counts.conflicts > 0 && confirming.verb === 'rewind') parts.push(`${plural(counts.conflicts, 'file')} changed since the agent last wrote ${them}: that edit is overwritten.`);
  if (counts.conflicts > 0 && confirming.verb === 'revert') {
    const outcome = confirming.onConflict === 'markers' ? 'written with conflict markers' : 'put back as before the turn, discarding the later changes';
    parts.push(`${plural(counts.conflicts, 'file')} conflict with later changes: ${outcome}.`);
  }
  if (counts.leftAlone > 0) parts.push(`${plural(counts.leftAlone, 'file')} left alone.`);
  parts.push('An undo point is taken first.');
  return parts.join(' ');
}

/**
 * Asks in the page's modal dialog. Escape (the dialog's cancel) and the
 * Cancel button answer undefined; Enter on the focused Rewind (or Revert)
 * button, or a click on it, answers the chosen scope (always `files` when
 * the conversation is not offered).
 */
export function askToRewind(counts: PreviewResponse['counts'], offersConversation: boolean, confirming: Confirming = { verb: 'rewind' }): Promise<RewindScopeChoice | undefined> {
  const dialog = document.getElementById('confirm') as HTMLDialogElement;
  const form = dialog.querySelector('form')!;
  const verb = confirming.verb === 'rewind' ? 'Rewind' : 'Revert';
  document.getElementById('confirm-title')!.textContent = `${verb}?`;
  document.getElementById('confirm-counts')!.textContent = confirmationText(counts, confirming);
  const ok = document.getElementById('confirm-ok') as HTMLButtonElement;
  ok.textContent = verb;
  const scope = document.getElementById('confirm-scope') as HTMLFieldSetElement;
  scope.hidden = !offersConversation;
  form.reset();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        const chosen = offersConversation ? new FormData(form).get('scope') : null;
        resolve(dialog.returnValue === 'confirm' ? ((chosen as RewindScopeChoice | null) ?? 'files') : undefined);
      },
      { once: true },
    );
    dialog.returnValue = '';
    dialog.showModal();
    ok.focus();
  });
}
