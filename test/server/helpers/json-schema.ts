/**
 * A validator for the part of JSON Schema (2020-12) that zod's
 * `z.toJSONSchema` writes for the protocol's params: types, properties,
 * required, additionalProperties, items, enum, const, anyOf, string length
 * and pattern, number bounds. A keyword outside that part throws, so the
 * check never passes by ignoring a rule the schema states.
 */

export type JsonSchema = Record<string, unknown>;

const understood = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'propertyNames', 'items', 'enum', 'const', 'anyOf',
  'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minItems', 'description',
]);

/** The reasons `value` does not match `schema` (none: it matches). */
export function schemaErrors(schema: JsonSchema, value: unknown, at = '$'): string[] {
  for (const keyword of Object.keys(schema)) if (!understood.has(keyword)) throw new Error(`schemaErrors does not know the keyword ${keyword} (at ${at})`);
  const errors: string[] = [];
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((type) => hasType(value, type))) return [`${at}: expected ${types.join(' or ')}`];
  }
  if (schema.const !== undefined && value !== schema.const) errors.push(`${at}: expected ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !(schema.enum as unknown[]).includes(value)) errors.push(`${at}: expected one of ${JSON.stringify(schema.enum)}`);
  if (schema.anyOf !== undefined && !(schema.anyOf as JsonSchema[]).some((option) => schemaErrors(option, value, at).length === 0)) errors.push(`${at}: matches no option of anyOf`);
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) errors.push(`${at}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) errors.push(`${at}: longer than ${schema.maxLength}`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${at}: does not match ${schema.pattern}`);
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${at}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${at}: above ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) errors.push(`${at}: not above ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) errors.push(`${at}: not below ${schema.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) errors.push(`${at}: fewer than ${schema.minItems} items`);
    if (schema.items !== undefined) value.forEach((item, index) => errors.push(...schemaErrors(schema.items as JsonSchema, item, `${at}[${index}]`)));
  }
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of (schema.required ?? []) as string[]) if (!(name in value)) errors.push(`${at}: lacks ${name}`);
    for (const [name, field] of Object.entries(value)) {
      if (name in properties) errors.push(...schemaErrors(properties[name]!, field, `${at}.${name}`));
      else if (schema.additionalProperties === false) errors.push(`${at}: has no field ${name}`);
      else if (isObject(schema.additionalProperties)) errors.push(...schemaErrors(schema.additionalProperties, field, `${at}.${name}`));
      if (isObject(schema.propertyNames)) errors.push(...schemaErrors(schema.propertyNames, name, `${at} (name ${name})`));
    }
  }
  return errors;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      throw new Error(`schemaErrors does not know the type ${type}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
