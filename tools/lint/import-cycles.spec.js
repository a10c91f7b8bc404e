"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.relativeImports = relativeImports;
exports.findCycles = findCycles;
const node_fs_1 = require("node:fs");
const node_path_1 = __importDefault(require("node:path"));
/**
 * No file reaches itself through relative imports (type-only imports included: a cycle of types is still a
 * cycle a reader has to untangle). Cross-project imports go through `@apphost/*` and are the module-boundary
 * rule's business; this walks the files inside each project.
 */
const root = node_path_1.default.resolve(__dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', 'tmp', '.nx', '.apphost']);
function sourceFiles(dir) {
    return (0, node_fs_1.readdirSync)(dir).flatMap((entry) => {
        if (SKIP.has(entry))
            return [];
        const full = node_path_1.default.join(dir, entry);
        if ((0, node_fs_1.statSync)(full).isDirectory())
            return sourceFiles(full);
        return entry.endsWith('.ts') && !entry.endsWith('.d.ts') ? [full] : [];
    });
}
const SPECIFIER = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"](\.{1,2}\/[^'"]*)['"]|(?:^|[^\w.])(?:import|require)\(\s*['"](\.{1,2}\/[^'"]*)['"]\s*\)|^\s*import\s*['"](\.{1,2}\/[^'"]*)['"]/gm;
function resolve(from, specifier) {
    const base = node_path_1.default.resolve(node_path_1.default.dirname(from), specifier);
    for (const candidate of [base, `${base}.ts`, node_path_1.default.join(base, 'index.ts')]) {
        try {
            if ((0, node_fs_1.statSync)(candidate).isFile() && candidate.endsWith('.ts'))
                return candidate;
        }
        catch {
            // not this candidate
        }
    }
    return undefined;
}
/** Relative imports of one file, resolved to files (comments stripped so an example in a doc comment does not count). */
function relativeImports(file, text) {
    const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
    const found = new Set();
    for (const match of code.matchAll(SPECIFIER)) {
        const target = resolve(file, match[1] ?? match[2] ?? match[3]);
        if (target)
            found.add(target);
    }
    return [...found];
}
/** Every strongly connected group of more than one file (or a file importing itself), each as a path of files. */
function findCycles(graph) {
    let index = 0;
    const indices = new Map();
    const low = new Map();
    const stack = [];
    const onStack = new Set();
    const cycles = [];
    const visit = (node) => {
        indices.set(node, index);
        low.set(node, index++);
        stack.push(node);
        onStack.add(node);
        for (const next of graph.get(node) ?? []) {
            if (!indices.has(next)) {
                visit(next);
                low.set(node, Math.min(low.get(node), low.get(next)));
            }
            else if (onStack.has(next))
                low.set(node, Math.min(low.get(node), indices.get(next)));
        }
        if (low.get(node) === indices.get(node)) {
            const group = [];
            let member;
            do {
                member = stack.pop();
                onStack.delete(member);
                group.push(member);
            } while (member !== node);
            if (group.length > 1 || (graph.get(node) ?? []).includes(node))
                cycles.push(group.sort());
        }
    };
    for (const node of graph.keys())
        if (!indices.has(node))
            visit(node);
    return cycles;
}
describe('import cycles', () => {
    it('finds a cycle in a graph that has one, and none in a chain', () => {
        expect(findCycles(new Map([
            ['a', ['b']],
            ['b', ['c']],
            ['c', ['a']],
            ['d', ['a']],
        ]))).toEqual([['a', 'b', 'c']]);
        expect(findCycles(new Map([
            ['a', ['b']],
            ['b', ['c']],
            ['c', []],
        ]))).toEqual([]);
        expect(findCycles(new Map([['a', ['a']]]))).toEqual([['a']]);
    });
    it('reads import, export-from, type-only and require specifiers, not ones in comments', () => {
        const file = node_path_1.default.join(root, 'libs', 'bus', 'src', 'lib', 'nest', 'probe.ts');
        const text = [
            "import { BusServer } from '../bus-server';",
            "import type { BusTransport } from '../transports/transport';",
            "export { BUS_OPTIONS } from './bus.tokens';",
            "// import { BusModule } from './bus.module';",
            '/* export * from "./bus-explorer"; */',
        ].join('\n');
        const rel = relativeImports(file, text).map((f) => node_path_1.default.relative(root, f));
        expect(rel.sort()).toEqual(['libs/bus/src/lib/bus-server.ts', 'libs/bus/src/lib/nest/bus.tokens.ts', 'libs/bus/src/lib/transports/transport.ts']);
    });
    it('has no cycle of relative imports in apps, libs or tools', () => {
        const files = ['apps', 'libs', 'tools'].flatMap((d) => sourceFiles(node_path_1.default.join(root, d)));
        expect(files.length).toBeGreaterThan(100);
        const graph = new Map(files.map((f) => [f, relativeImports(f, (0, node_fs_1.readFileSync)(f, 'utf8'))]));
        expect(findCycles(graph).map((group) => group.map((f) => node_path_1.default.relative(root, f)))).toEqual([]);
    });
});
//# sourceMappingURL=import-cycles.spec.js.map