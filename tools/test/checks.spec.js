"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_path_1 = __importDefault(require("node:path"));
// The runner's checks are CommonJS (run.cjs loads them without a transpiler).
const checks = require('./checks.cjs');
const node = (name, root, targets) => ({ name, data: { root, targets: Object.fromEntries(targets.map((t) => [t, {}])) } });
const nodes = {
    bus: node('bus', 'libs/bus', ['lint', 'test']),
    gateway: node('gateway', 'apps/gateway', ['lint', 'test']),
    docs: node('docs', 'docs', ['lint']),
};
describe('runner checks', () => {
    it('names every project without a test target', () => {
        expect(checks.projectsWithoutTestTarget(nodes)).toEqual(['docs']);
        expect(checks.projectsWithoutTestTarget({ bus: nodes.bus })).toEqual([]);
    });
    it('expects every project with tests, or only those --projects names', () => {
        expect(checks.selectedProjects(nodes, []).map((n) => n.name)).toEqual(['bus', 'gateway']);
        expect(checks.selectedProjects(nodes, ['--projects=gateway']).map((n) => n.name)).toEqual(['gateway']);
        expect(checks.selectedProjects(nodes, ['-p', 'bus,docs']).map((n) => n.name)).toEqual(['bus']);
    });
    it('fails a project that reported nothing or passed zero tests', () => {
        const expected = [
            { name: 'bus', root: 'libs/bus' },
            { name: 'gateway', root: 'apps/gateway' },
            { name: 'tools', root: 'tools' },
        ];
        const tallies = [
            { root: 'libs/bus', passed: 12, failed: 0, skipped: 0 },
            { root: 'apps/gateway', passed: 0, failed: 0, skipped: 0 },
        ];
        expect(checks.projectsWithoutPassedTests(expected, tallies)).toEqual(['gateway: 0 tests passed', 'tools: no test run reported']);
        expect(checks.projectsWithoutPassedTests(expected.slice(0, 1), tallies)).toEqual([]);
    });
    it('collects the test files that registered no test', () => {
        expect(checks.emptyTestFiles([
            { root: 'tools', passed: 3, failed: 0, skipped: 0, emptyFiles: ['tools/b.spec.ts', 'tools/a.spec.ts'] },
            { root: 'libs/bus', passed: 1, failed: 0, skipped: 0 },
        ])).toEqual(['tools/a.spec.ts', 'tools/b.spec.ts']);
    });
    describe('conditional registration', () => {
        const scan = (source) => checks.conditionalRegistrations('x.spec.ts', source).map((s) => s.replace(/^x\.spec\.ts:/, ''));
        it('flags tests registered under an if, a ternary, a short-circuit or a switch', () => {
            expect(scan("if (kubectl) {\n  it('renders', () => expect(1).toBe(1));\n}\n")).toEqual(['2: it(...) registered under an if']);
            expect(scan("if (!binary) describe('x', () => undefined);\n")).toEqual(['1: describe(...) registered under an if']);
            expect(scan("const x = ok ? it('a', () => undefined) : undefined;\n")).toEqual(['1: it(...) registered under a ternary']);
            expect(scan("ok && test.each([1])('a %s', () => undefined);\n")).toEqual(['1: test(...) registered under a short-circuit']);
            expect(scan("switch (mode) {\n  case 'a':\n    it('a', () => undefined);\n}\n")).toEqual(['3: it(...) registered under a switch']);
        });
        it('flags a registrar chosen by a condition, and a .each table filled conditionally', () => {
            expect(scan("(hasKubectl ? describe : describe.skip)('kustomize', () => undefined);\n")).toEqual(['1: describe chosen by a condition']);
            expect(scan('const maybe = process.env.CI ? it : it.skip;\n')).toEqual(['1: it chosen by a condition']);
            expect(scan('const itIf = ok && it;\n')).toEqual(['1: it chosen by a condition']);
            expect(scan("const sources = [a];\nif (kubectl) sources.push(b);\ndescribe.each(sources)('$name', () => undefined);\n")).toEqual([
                '2: the table of sources.each is filled under an if',
            ]);
        });
        it('accepts conditions inside test bodies, loops over fixed tables and unconditional suites', () => {
            const source = [
                "describe('suite', () => {",
                '  for (const name of NAMES) {',
                '    it(`checks ${name}`, () => {',
                '      if (name === "a") expect(name).toBe("a");',
                '      else expect(name).not.toBe("a");',
                '    });',
                '  }',
                "  it.each([1, 2])('n=%s', (n) => expect(n > 0 ? n : -n).toBeGreaterThan(0));",
                '  const cases = [1];',
                '  cases.push(2);',
                "  describe.each(cases)('case %s', () => undefined);",
                '});',
            ].join('\n');
            expect(scan(source)).toEqual([]);
        });
        it('finds none in the tree: every spec file registers its tests unconditionally', () => {
            expect(checks.conditionalRegistrationsInTree(node_path_1.default.resolve(__dirname, '..', '..'))).toEqual([]);
        });
    });
});
//# sourceMappingURL=checks.spec.js.map