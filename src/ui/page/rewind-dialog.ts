/// <reference lib="dom" />
import type { PreviewResponse } from '../timeline-types.js';
import { plural } from './dom.js';

export type RewindScopeChoice = 'files' | 'conversation' | 'both';

/** The sentence the confirmation repeats from the preview. */
export function confirmationText(counts: PreviewResponse['counts']): string {
  const parts = [`Rewind ${plural(counts.files, 'file')} (+${counts.insertions} −${counts.deletions})?`];
  if (counts.conflicts > 0) parts.push(`${plural(counts.conflicts, 'file')} changed since the agent last wrote ${counts.conflicts === 1 ? 'it' : 'them'}: that edit is overwritten.`);
  if (counts.leftAlone > 0) parts.push(`${plural(counts.leftAlone, 'file')} left alone.`);
  parts.push('An undo point is taken first.');
  return parts.join(' ');
}

/**
 * Asks in the page's modal dialog. Escape (the dialog's cancel) and the
 * Cancel button answer undefined; Enter on the focused Rewind button, or a
 * click on it, answers the chosen scope.
 */
export function askToRewind(counts: PreviewResponse['counts'], offersConversation: boolean): Promise<RewindScopeChoice | undefined> {
  const dialog = document.getElementById('confirm') as HTMLDialogElement;
  const form = dialog.querySelector('form')!;
  document.getElementById('confirm-counts')!.textContent = confirmationText(counts);
  const scope = document.getElementById('confirm-scope') as HTMLFieldSetElement;
  scope.hidden = !offersConversation;
  form.reset();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        const chosen = new FormData(form).get('scope');
        resolve(dialog.returnValue === 'confirm' ? ((chosen as RewindScopeChoice | null) ?? 'files') : undefined);
      },
      { once: true },
    );
    dialog.returnValue = '';
    dialog.showModal();
    (document.getElementById('confirm-ok') as HTMLButtonElement).focus();
  });
}
