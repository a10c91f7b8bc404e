import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * No file reaches itself through relative imports (type-only imports included: a cycle of types is still a
 * cycle a reader has to untangle). Cross-project imports go through `@apphost/*` and are the module-boundary
 * rule's business; this walks the files inside each project.
 */
const root = path.resolve(__dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', 'tmp', '.nx', '.apphost']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    if (SKIP.has(entry)) return [];
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return entry.endsWith('.ts') && !entry.endsWith('.d.ts') ? [full] : [];
  });
}

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"](\.{1,2}\/[^'"]*)['"]|(?:^|[^\w.])(?:import|require)\(\s*['"](\.{1,2}\/[^'"]*)['"]\s*\)|^\s*import\s*['"](\.{1,2}\/[^'"]*)['"]/gm;

function resolve(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile() && candidate.endsWith('.ts')) return candidate;
    } catch {
      // not this candidate
    }
  }
  return undefined;
}

/** Relative imports of one file, resolved to files (comments stripped so an example in a doc comment does not count). */
export function relativeImports(file: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const found = new Set<string>();
  for (const match of code.matchAll(SPECIFIER)) {
    const target = resolve(file, match[1] ?? match[2] ?? match[3]);
    if (target) found.add(target);
  }
  return [...found];
}

/** Every strongly connected group of more than one file (or a file importing itself), each as a path of files. */
export function findCycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, indices.get(next) as number));
    }
    if (low.get(node) === indices.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return cycles;
}

describe('import cycles', () => {
  it('finds a cycle in a graph that has one, and none in a chain', () => {
    expect(
      findCycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
    expect(
      findCycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
    expect(findCycles(new Map([['a', ['a']]]))).toEqual([['a']]);
  });

  it('reads import, export-from, type-only and require specifiers, not ones in comments', () => {
    const file = path.join(root, 'libs', 'bus', 'src', 'lib', 'nest', 'probe.ts');
    const text = [
      "import { BusServer } from '../bus-server';",
      "import type { BusTransport } from '../transports/transport';",
      "export { BUS_OPTIONS } from './bus.tokens';",
      "// import { BusModule } from './bus.module';",
      '/* export * from "./bus-explorer"; */',
    ].join('\n');
    const rel = relativeImports(file, text).map((f) => path.relative(root, f));
    expect(rel.sort()).toEqual(['libs/bus/src/lib/bus-server.ts', 'libs/bus/src/lib/nest/bus.tokens.ts', 'libs/bus/src/lib/transports/transport.ts']);
  });

  it('has no cycle of relative imports in apps, libs or tools', () => {
    const files = ['apps', 'libs', 'tools'].flatMap((d) => sourceFiles(path.join(root, d)));
    expect(files.length).toBeGreaterThan(100);
    const graph = new Map(files.map((f) => [f, relativeImports(f, readFileSync(f, 'utf8'))]));
    expect(findCycles(graph).map((group) => group.map((f) => path.relative(root, f)))).toEqual([]);
  });
});
