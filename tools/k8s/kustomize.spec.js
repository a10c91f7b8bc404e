"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
const node_fs_1 = require("node:fs");
const node_os_1 = __importDefault(require("node:os"));
const node_path_1 = __importDefault(require("node:path"));
const kustomize_1 = require("./kustomize");
const manifests_1 = require("./manifests");
/** The in-process renderer, on small kustomizations and on the repository's own overlay. */
let dir;
beforeEach(() => {
    dir = (0, node_fs_1.mkdtempSync)(node_path_1.default.join(node_os_1.default.tmpdir(), 'apphost-kustomize-'));
});
afterEach(() => (0, node_fs_1.rmSync)(dir, { recursive: true, force: true }));
const write = (file, text) => {
    (0, node_fs_1.mkdirSync)(node_path_1.default.dirname(node_path_1.default.join(dir, file)), { recursive: true });
    (0, node_fs_1.writeFileSync)(node_path_1.default.join(dir, file), text);
};
const byId = (objects) => Object.fromEntries(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: ghcr.io/apphost/apphost:0.0.1
          env:
            - name: A
              value: "1"
        - name: sidecar
          image: busybox@sha256:${'a'.repeat(64)}
`;
describe('in-process kustomize', () => {
    it('renders nested resources, then patches, namespace and images', () => {
        write('base/kustomization.yaml', 'resources:\n  - deployment.yaml\n  - config.yaml\n');
        write('base/deployment.yaml', DEPLOYMENT);
        write('base/config.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  LEVEL: info\n  KEEP: "yes"\n  DROP: "x"\n---\n');
        write('overlay/kustomization.yaml', 'namespace: dev\nresources:\n  - ns.yaml\n  - ../base\nimages:\n  - name: ghcr.io/apphost/apphost\n    newTag: 0.2.0\npatches:\n  - path: patch.yaml\n');
        write('overlay/ns.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dev\n');
        write('overlay/patch.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  LEVEL: debug\n  DROP: null\n');
        const rendered = byId((0, kustomize_1.kustomize)(node_path_1.default.join(dir, 'overlay')));
        expect(Object.keys(rendered).sort()).toEqual(['ConfigMap/settings', 'Deployment/web', 'Namespace/dev']);
        expect(rendered['ConfigMap/settings']).toMatchObject({ metadata: { name: 'settings', namespace: 'dev' }, data: { LEVEL: 'debug', KEEP: 'yes' } });
        expect(rendered['ConfigMap/settings'].data).not.toHaveProperty('DROP');
        expect(rendered['Namespace/dev'].metadata).toEqual({ name: 'dev' });
        const containers = rendered['Deployment/web'].spec.template.spec.containers;
        expect(containers.map((c) => c.image)).toEqual(['ghcr.io/apphost/apphost:0.2.0', `busybox@sha256:${'a'.repeat(64)}`]);
        expect(rendered['Deployment/web'].metadata.namespace).toBe('dev');
    });
    it('merges named lists by name and replaces other lists', () => {
        const target = { containers: [{ name: 'a', image: 'x', args: ['1', '2'] }, { name: 'b', image: 'y' }] };
        const patch = { containers: [{ name: 'a', args: ['3'] }, { name: 'c', image: 'z' }] };
        expect((0, kustomize_1.strategicMerge)(target, patch)).toEqual({ containers: [{ name: 'a', image: 'x', args: ['3'] }, { name: 'b', image: 'y' }, { name: 'c', image: 'z' }] });
    });
    it('rewrites images by name only, keeping or replacing tag and digest', () => {
        const rules = [{ name: 'reg.io/app', newTag: '2' }, { name: 'other', newName: 'reg.io/other', digest: `sha256:${'b'.repeat(64)}` }, { name: 'keep', newName: 'reg.io/keep' }];
        expect((0, kustomize_1.applyImageRules)('reg.io/app:1', rules)).toBe('reg.io/app:2');
        expect((0, kustomize_1.applyImageRules)('reg.io/app', rules)).toBe('reg.io/app:2');
        expect((0, kustomize_1.applyImageRules)('reg.io/app-two:1', rules)).toBe('reg.io/app-two:1');
        expect((0, kustomize_1.applyImageRules)('other:3', rules)).toBe(`reg.io/other@sha256:${'b'.repeat(64)}`);
        expect((0, kustomize_1.applyImageRules)('keep:4', rules)).toBe('reg.io/keep:4');
        expect((0, kustomize_1.applyImageRules)('localhost:5000/app:1', [{ name: 'localhost:5000/app', newTag: '9' }])).toBe('localhost:5000/app:9');
    });
    it('refuses what it does not render instead of approximating it', () => {
        write('a/kustomization.yaml', 'resources: []\nnamePrefix: x-\n');
        expect(() => (0, kustomize_1.kustomize)(node_path_1.default.join(dir, 'a'))).toThrow(/namePrefix not supported/);
        write('b/kustomization.yaml', 'resources: []\npatches:\n  - target:\n      kind: Deployment\n    patch: "[]"\n');
        expect(() => (0, kustomize_1.kustomize)(node_path_1.default.join(dir, 'b'))).toThrow(/only patches given by `path`/);
        write('c/kustomization.yaml', 'resources:\n  - https://example.com/base\n');
        expect(() => (0, kustomize_1.kustomize)(node_path_1.default.join(dir, 'c'))).toThrow(/remote resource/);
        write('d/kustomization.yaml', 'resources:\n  - cm.yaml\npatches:\n  - path: patch.yaml\n');
        write('d/cm.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\n');
        write('d/patch.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\ndata: {}\n');
        expect(() => (0, kustomize_1.kustomize)(node_path_1.default.join(dir, 'd'))).toThrow(/matches 0 objects/);
    });
    it('renders the dev overlay: the base in apphost-dev, debug logs, the development issuer, the pinned image', () => {
        const base = (0, kustomize_1.kustomize)(node_path_1.default.join(manifests_1.REPO_ROOT, 'k8s', 'base'));
        const dev = (0, kustomize_1.kustomize)(node_path_1.default.join(manifests_1.REPO_ROOT, 'k8s', 'overlays', 'dev'));
        const rendered = byId(dev);
        for (const object of base)
            expect(rendered).toHaveProperty([`${object.kind}/${object.metadata.name}`]);
        for (const object of dev)
            expect({ id: `${object.kind}/${object.metadata.name}`, namespace: object.metadata.namespace }).toEqual({ id: `${object.kind}/${object.metadata.name}`, namespace: object.kind === 'Namespace' ? undefined : 'apphost-dev' });
        expect(rendered['ConfigMap/apphost-config']).toMatchObject({ data: { LOG_LEVEL: 'debug', NATS_URL: 'nats://nats:4222' } });
        expect(rendered['ConfigMap/apphost-gateway-auth']).toMatchObject({ data: { AUTH_JWT_AUDIENCE: 'apphost-dev', AUTH_MODE: 'jwt' } });
        expect(rendered).toHaveProperty(['Ingress/gateway']);
    });
});
//# sourceMappingURL=kustomize.spec.js.map