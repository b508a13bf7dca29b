/* global document */
/**
 * A bot's modal (interaction callback type 9) as Discord draws it: a title, text inputs,
 * Cancel and Submit. Inputs come in legacy action rows (`{type:1, components:[{type:4…}]}`)
 * or in label components (`{type:18, label, description, component:{type:4…}}`); text
 * displays (type 10) are shown as text. Required, min and max lengths are enforced here.
 */
import { h, icon } from './dom.js';

const TEXT_INPUT = 4;
const ACTION_ROW = 1;
const TEXT_DISPLAY = 10;
const LABEL = 18;
const PARAGRAPH = 2;

/** The modal's parts in order: `{ input, label, description }` or `{ text }`. */
function modalParts(modal) {
  return (modal.components ?? []).flatMap((component) => {
    if (component.type === ACTION_ROW) {
      return (component.components ?? []).filter((child) => child.type === TEXT_INPUT).map((input) => ({ input, label: input.label }));
    }
    if (component.type === LABEL && component.component?.type === TEXT_INPUT) {
      return [{ input: component.component, label: component.label, description: component.description }];
    }
    if (component.type === TEXT_DISPLAY) return [{ text: component.content }];
    return [];
  });
}

function inputElement(input, id) {
  const common = {
    id,
    name: input.custom_id,
    placeholder: input.placeholder,
    maxlength: input.max_length,
    value: input.value ?? '',
  };
  return input.style === PARAGRAPH
    ? h('textarea', { ...common, class: 'modal-input modal-textarea', rows: 5 })
    : h('input', { ...common, class: 'modal-input', type: 'text' });
}

/** The problem with a value, as Discord words it, or undefined. */
function problemWith(input, value) {
  const required = input.required !== false;
  if (value.trim() === '') return required ? 'This field is required.' : undefined;
  if (input.min_length !== undefined && value.length < input.min_length) return `Must be at least ${input.min_length} characters long.`;
  if (input.max_length !== undefined && value.length > input.max_length) return `Must be ${input.max_length} characters or fewer.`;
  return undefined;
}

function field(part, index) {
  const id = `modal-field-${index}`;
  const control = inputElement(part.input, id);
  const error = h('span', { class: 'modal-field-error', role: 'alert' });
  const required = part.input.required !== false;
  const node = h(
    'div',
    { class: 'modal-field' },
    h('label', { class: 'modal-label', for: id }, part.label ?? part.input.custom_id, required ? h('span', { class: 'modal-required', text: ' *' }) : null),
    part.description ? h('div', { class: 'modal-description', text: part.description }) : null,
    error,
    control,
  );
  return { node, control, error, input: part.input };
}

/**
 * Shows `modal`; `submit(fields)` sends `{ customId: value }` and resolves once the bot has
 * answered, or rejects with a readable error, which is shown in the modal (it stays open).
 */
export function openModal(modal, submit) {
  const parts = modalParts(modal);
  const fields = parts.filter((part) => part.input).map((part, index) => field(part, index));
  const footerError = h('div', { class: 'modal-footer-error', role: 'alert' });
  const submitButton = h('button', { type: 'submit', class: 'btn btn-1 modal-submit', 'data-testid': 'modal-submit', text: 'Submit' });
  const cancel = h('button', { type: 'button', class: 'modal-cancel', text: 'Cancel' });
  const close = h('button', { type: 'button', class: 'modal-close', 'aria-label': 'Close' }, icon('close', 24));

  let fieldIndex = 0;
  const body = parts.map((part) => (part.input ? fields[fieldIndex++].node : h('p', { class: 'modal-text', text: part.text })));
  const form = h(
    'form',
    { class: 'modal-form', method: 'dialog', novalidate: true },
    h('header', { class: 'modal-header' }, h('h2', { class: 'modal-title', text: modal.title }), close),
    h('div', { class: 'modal-body' }, body),
    h('footer', { class: 'modal-footer' }, footerError, cancel, submitButton),
  );
  const dialog = h('dialog', { class: 'modal', 'data-testid': 'modal', 'aria-label': modal.title }, form);

  const dismiss = () => dialog.close();
  cancel.addEventListener('click', dismiss);
  close.addEventListener('click', dismiss);
  dialog.addEventListener('close', () => dialog.remove());
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!validate(fields)) return;
    await closeAfter(dialog, submitButton, footerError, () => submit(Object.fromEntries(fields.map((item) => [item.input.custom_id, item.control.value]))));
  });

  document.body.append(dialog);
  dialog.showModal();
  (fields.find((item) => item.control.value === '') ?? fields[0])?.control.focus();
}

/**
 * Discord's checkout for a premium button, reduced to its decision: what is sold, its price,
 * Buy (or Subscribe) and Cancel. `buy()` resolves once bought, or rejects with a readable
 * error, shown in the dialog (it stays open).
 */
export function openPurchase(sku, buy) {
  const subscription = sku.type === 'subscription';
  const action = subscription ? `Subscribe to ${sku.name}` : `Buy ${sku.name}`;
  const footerError = h('div', { class: 'modal-footer-error', role: 'alert' });
  const confirm = h('button', { type: 'submit', class: 'btn btn-1 modal-submit', 'data-testid': 'purchase-buy', text: action });
  const cancel = h('button', { type: 'button', class: 'modal-cancel', 'data-testid': 'purchase-cancel', text: 'Cancel' });
  const close = h('button', { type: 'button', class: 'modal-close', 'aria-label': 'Close' }, icon('close', 24));
  const form = h(
    'form',
    { class: 'modal-form', method: 'dialog', novalidate: true },
    h('header', { class: 'modal-header' }, h('h2', { class: 'modal-title', text: sku.name }), close),
    h(
      'div',
      { class: 'modal-body' },
      h('p', { class: 'purchase-price', text: sku.price }),
      h('p', {
        class: 'modal-text',
        text: subscription ? 'For everyone in this server, renewed each month until cancelled.' : 'A one-time purchase for your account.',
      }),
      h('p', { class: 'modal-description', text: 'Nothing is charged: this Discord is emulated on this machine.' }),
    ),
    h('footer', { class: 'modal-footer' }, footerError, cancel, confirm),
  );
  const dialog = h('dialog', { class: 'modal purchase', 'data-testid': 'purchase-dialog', 'aria-label': action }, form);
  const dismiss = () => dialog.close();
  cancel.addEventListener('click', dismiss);
  close.addEventListener('click', dismiss);
  dialog.addEventListener('close', () => dialog.remove());
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    await closeAfter(dialog, confirm, footerError, buy);
  });
  document.body.append(dialog);
  dialog.showModal();
  confirm.focus();
}

/** Marks each field's problem; true when there is none. Focuses the first bad field. */
function validate(fields) {
  let firstBad;
  for (const item of fields) {
    const problem = problemWith(item.input, item.control.value);
    item.error.textContent = problem ?? '';
    item.node.classList.toggle('invalid', Boolean(problem));
    firstBad ??= problem ? item : undefined;
  }
  firstBad?.control.focus();
  return firstBad === undefined;
}

/** Runs the dialog's action with its button busy: closes the dialog once it succeeds, or shows why it failed. */
async function closeAfter(dialog, button, footerError, action) {
  button.disabled = true;
  button.classList.add('busy');
  footerError.textContent = '';
  try {
    await action();
    dialog.close();
  } catch (error) {
    footerError.textContent = error.message;
    button.disabled = false;
    button.classList.remove('busy');
  }
}
