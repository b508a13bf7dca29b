/** Message components and modals from the user's side: finding the component a user acts on, and what a modal submit sends back. */
import { ComponentType } from 'discord-api-types/v10';
import type { APIModalInteractionResponseCallbackData, APIModalSubmissionComponent } from 'discord-api-types/v10';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface ComponentLike {
  type?: unknown;
  custom_id?: unknown;
  disabled?: unknown;
  components?: unknown;
  accessory?: unknown;
  component?: unknown;
}

/** Depth-first search for a component by custom id (action rows, containers, sections, labels). */
export function findComponent(components: unknown, customId: string): ComponentLike | undefined {
  if (!Array.isArray(components)) return undefined;
  for (const component of components as ComponentLike[]) {
    if (!isRecord(component)) continue;
    if (component.custom_id === customId) return component;
    const nested =
      findComponent(component.components, customId) ??
      findComponent(component.accessory ? [component.accessory] : [], customId) ??
      findComponent(component.component ? [component.component] : [], customId);
    if (nested) return nested;
  }
  return undefined;
}

/** The submitted components, mirroring the layout (action rows or labels) of the modal the bot sent. */
export function modalSubmission(modal: APIModalInteractionResponseCallbackData, fields: Record<string, string>): APIModalSubmissionComponent[] {
  const known = new Set<string>();
  const result: unknown[] = [];
  for (const component of modal.components as unknown[]) {
    if (!isRecord(component)) continue;
    if (component.type === ComponentType.ActionRow && Array.isArray(component.components)) {
      const inputs = component.components.filter(isRecord);
      result.push({
        type: ComponentType.ActionRow,
        ...(typeof component.id === 'number' ? { id: component.id } : {}),
        components: inputs.map((input) => {
          const customId = String(input.custom_id);
          known.add(customId);
          return { type: ComponentType.TextInput, ...(typeof input.id === 'number' ? { id: input.id } : {}), custom_id: customId, value: fields[customId] ?? '' };
        }),
      });
    } else if (component.type === ComponentType.Label && isRecord(component.component)) {
      const input = component.component;
      const customId = String(input.custom_id);
      known.add(customId);
      const submitted =
        input.type === ComponentType.TextInput
          ? { type: ComponentType.TextInput, custom_id: customId, value: fields[customId] ?? '' }
          : { type: input.type, custom_id: customId, values: fields[customId] ? [fields[customId]] : [] };
      result.push({
        type: ComponentType.Label,
        ...(typeof component.id === 'number' ? { id: component.id } : {}),
        component: { ...(typeof input.id === 'number' ? { id: input.id } : {}), ...submitted },
      });
    } else if (component.type === ComponentType.TextDisplay) {
      result.push({ type: ComponentType.TextDisplay, ...(typeof component.id === 'number' ? { id: component.id } : {}) });
    }
  }
  for (const field of Object.keys(fields)) {
    if (!known.has(field)) throw new Error(`the modal "${modal.custom_id}" has no input "${field}"`);
  }
  return result as APIModalSubmissionComponent[];
}

/** The fields as action rows of text inputs, for a submit with no modal from the bot behind it. */
export function plainSubmission(fields: Record<string, string>): APIModalSubmissionComponent[] {
  return Object.entries(fields).map(([customId, value]) => ({
    type: ComponentType.ActionRow,
    components: [{ type: ComponentType.TextInput, custom_id: customId, value }],
  })) as APIModalSubmissionComponent[];
}

