import type { z } from 'zod';
import {
  AddTagAction,
  CreateContactAction,
  CreateDealAction,
  CreateTaskAction,
  SendSmsAction,
  UpdateContactAction,
} from './action-inputs.ts';
import type { ActionDefinition, ActionInputDefinition, DropdownSource } from './schemas.ts';

const BASE = '/integrations/automation';

/** Each dropdown's route, and which field of its choices is the input's value and which the label. */
const DROPDOWNS: Record<DropdownSource, { value: string; label: string }> = {
  pipelines: { value: 'id', label: 'name' },
  tags: { value: 'id', label: 'name' },
  // create_contact.company and update_contact.company take a domain, not an id.
  companies: { value: 'domain', label: 'label' },
};

const dropdownRef = (baseUrl: string, source: DropdownSource | undefined): ActionInputDefinition['dropdown'] =>
  source ? { source, url: `${baseUrl}${BASE}/dropdowns/${source}`, ...DROPDOWNS[source] } : null;

/** What each input is, for the platform's forms; an input's own schema description wins where it has one. */
const INPUTS: Record<string, { label: string; description: string; list?: boolean; dropdown?: DropdownSource }> = {
  id: { label: 'Contact ID', description: 'The contact.' },
  contactId: { label: 'Contact ID', description: 'A live contact of your organization.' },
  pipelineId: {
    label: 'Pipeline ID',
    description: 'A pipeline of your organization; the deal goes to its first stage.',
    dropdown: 'pipelines',
  },
  firstName: { label: 'First name', description: 'Up to 200 characters.' },
  lastName: { label: 'Last name', description: 'Up to 200 characters.' },
  email: { label: 'Email', description: 'Unique among the live contacts of your organization.' },
  phone: { label: 'Phone', description: 'As typed, e.g. +1 415 555 0123.' },
  company: {
    label: 'Company domain',
    description: "The domain of one of your organization's companies, e.g. example.com.",
    dropdown: 'companies',
  },
  source: { label: 'Source', description: 'Origin of the record (letters, digits, dot, dash, underscore; up to 40); default `zapier`.' },
  tags: { label: 'Tags', description: 'A list, or one comma-separated string.', list: true, dropdown: 'tags' },
  title: { label: 'Title', description: 'Up to 500 characters.' },
  to: { label: 'To', description: 'A contact id or phone number.' },
  body: { label: 'Message', description: 'The text, up to 1,600 characters.' },
};

interface ActionSpec {
  key: string;
  label: string;
  description: string;
  schema: z.ZodObject;
  /** At least one of these must be given; the schema enforces it. */
  requiredAnyOf?: string[];
}

/** The spec's Actions table, one entry per action, in its order. */
export const ACTIONS: readonly ActionSpec[] = [
  {
    key: 'create_contact',
    label: 'Create contact',
    description: 'Creates a contact (emits contact.created).',
    schema: CreateContactAction,
  },
  {
    key: 'update_contact',
    label: 'Update contact',
    description: 'Finds a contact by id or email and sets the fields given (emits contact.updated when anything changed).',
    schema: UpdateContactAction,
    requiredAnyOf: ['id', 'email'],
  },
  {
    key: 'create_deal',
    label: 'Create deal',
    description: "Opens a deal named after the contact on the pipeline's first stage (emits deal.created).",
    schema: CreateDealAction,
  },
  { key: 'create_task', label: 'Create task', description: 'Creates an unassigned task (emits task.created).', schema: CreateTaskAction },
  {
    key: 'send_sms',
    label: 'Send SMS',
    description: 'Texts a contact who consented to SMS; refused (409 sms_consent_required) otherwise (emits message.sent).',
    schema: SendSmsAction,
  },
  { key: 'add_tag', label: 'Add tags', description: 'Adds tags to a contact (one contact.tag_added per new tag).', schema: AddTagAction },
];

/** Required and optional inputs come from each action's own schema, so the list cannot drift from what is enforced. */
function definition(spec: ActionSpec, baseUrl: string): ActionDefinition {
  const anyOf = spec.requiredAnyOf ?? [];
  const fields = Object.entries(spec.schema.shape);
  const isRequired = (field: z.ZodType) => !field.safeParse(undefined).success;
  return {
    key: spec.key,
    label: spec.label,
    description: spec.description,
    required: fields.filter(([, f]) => isRequired(f)).map(([k]) => k),
    requiredAnyOf: anyOf,
    optional: fields.filter(([k, f]) => !isRequired(f) && !anyOf.includes(k)).map(([k]) => k),
    inputs: fields.map(([key, field]) => {
      const doc = INPUTS[key] ?? { label: key, description: '' };
      const own = field.meta()?.description;
      return {
        key,
        label: doc.label,
        required: isRequired(field),
        list: doc.list ?? false,
        description: own ?? doc.description,
        dropdown: dropdownRef(baseUrl, doc.dropdown),
      };
    }),
  };
}

/** The actions' definitions, with dropdown URLs under the server's BASE_URL. */
export const actionDefinitions = (baseUrl: string): ActionDefinition[] => ACTIONS.map((spec) => definition(spec, baseUrl));

/** The searches (find-or-create: search first, create when nothing is found). */
export const searchDefinitions = (baseUrl: string) => [
  {
    key: 'find_contact',
    label: 'Find contact',
    description: 'Finds the live contact with this exact email (trimmed, case-insensitive): a list of 0 or 1 contacts.',
    url: `${baseUrl}${BASE}/contacts/find`,
    inputs: [
      {
        key: 'email',
        label: 'Email',
        required: true,
        list: false,
        description: 'The exact email; matched trimmed and case-insensitively. Percent-encode a `+` as %2B.',
        dropdown: null,
      },
    ],
    createAction: 'create_contact',
  },
];
