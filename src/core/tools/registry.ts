// The tool registry: lookup by name, descriptors for the ledger, and specs for the model.
import type { ToolDescriptor } from '../acm/contracts.js';
import { AciaError } from '../errors.js';
import type { LlmToolSpec } from '../llm/types.js';
import type { Tool } from './types.js';

export class ToolRegistry {
  private readonly byName = new Map<string, Tool>();

  constructor(tools: readonly Tool[] = []) {
    for (const t of tools) this.add(t);
  }

  add(tool: Tool): this {
    if (this.byName.has(tool.name)) throw new AciaError('INTERNAL', `tool ${tool.name} registered twice`);
    this.byName.set(tool.name, tool);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.byName.get(name);
  }

  list(): Tool[] {
    return [...this.byName.values()];
  }

  descriptors(): ToolDescriptor[] {
    return this.list().map((t) => t.descriptor);
  }

  toLlmToolSpecs(): LlmToolSpec[] {
    return this.list().map((t) => ({ name: t.name, description: t.description, inputSchema: t.descriptor.inputSchema }));
  }
}
