"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.strategicMerge = strategicMerge;
exports.applyImageRules = applyImageRules;
exports.kustomize = kustomize;
const node_fs_1 = require("node:fs");
const node_path_1 = __importDefault(require("node:path"));
const yaml_1 = require("yaml");
const manifests_1 = require("./manifests");
/**
 * `kubectl kustomize <dir>` in-process, for the kustomization features k8s/ uses, so the deployment policy runs
 * on every machine: `resources` (files and directories with their own kustomization.yaml, rendered first),
 * `patches` given by `path` (strategic merge: maps merge, `null` deletes a key, lists of named items merge by
 * name, other lists are replaced), `namespace` (on every namespaced object) and `images` (`newName`, `newTag`,
 * `digest`). Anything else is refused, never approximated: extend this renderer together with the overlay
 * that needs more.
 */
const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'patches', 'namespace', 'images']);
/** Kinds without a namespace among those a kustomization here could hold. */
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PersistentVolume', 'StorageClass', 'PriorityClass', 'IngressClass']);
const isMap = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
function readKustomization(dir) {
    const file = node_path_1.default.join(dir, 'kustomization.yaml');
    const where = node_path_1.default.relative(manifests_1.REPO_ROOT, file);
    const [doc] = (0, yaml_1.parseAllDocuments)((0, node_fs_1.readFileSync)(file, 'utf8'));
    if (!doc || doc.errors.length > 0)
        throw new Error(`${where}: ${doc?.errors.map((e) => e.message).join('; ') ?? 'empty'}`);
    const value = doc.toJS();
    if (!isMap(value))
        throw new Error(`${where}: not a mapping`);
    const unsupported = Object.keys(value).filter((k) => !SUPPORTED.has(k));
    if (unsupported.length > 0)
        throw new Error(`${where}: ${unsupported.join(', ')} not supported by the in-process renderer (tools/k8s/kustomize.ts)`);
    const kustomization = value;
    for (const patch of kustomization.patches ?? []) {
        const extra = Object.keys(patch).filter((k) => k !== 'path');
        if (typeof patch.path !== 'string' || extra.length > 0)
            throw new Error(`${where}: only patches given by \`path\` (strategic merge) are supported, not ${extra.join(', ') || 'inline patches'}`);
    }
    return kustomization;
}
/** A strategic merge of `patch` into `target` (a copy): see the file comment for the rules. */
function strategicMerge(target, patch) {
    if (isMap(target) && isMap(patch)) {
        const out = { ...target };
        for (const [key, value] of Object.entries(patch)) {
            if (value === null)
                delete out[key];
            else
                out[key] = key in out ? strategicMerge(out[key], value) : value;
        }
        return out;
    }
    const named = (list) => list.every((item) => isMap(item) && typeof item['name'] === 'string');
    if (Array.isArray(target) && Array.isArray(patch) && named(target) && named(patch)) {
        const out = [...target];
        for (const item of patch) {
            const at = out.findIndex((existing) => existing['name'] === item['name']);
            if (at >= 0)
                out[at] = strategicMerge(out[at], item);
            else
                out.push(item);
        }
        return out;
    }
    return patch;
}
/** `image` with the first matching rule applied (matched on the name without tag or digest). */
function applyImageRules(image, rules) {
    const digestAt = image.indexOf('@');
    const withoutDigest = digestAt >= 0 ? image.slice(0, digestAt) : image;
    const colon = withoutDigest.lastIndexOf(':');
    const hasTag = colon > withoutDigest.lastIndexOf('/');
    const name = hasTag ? withoutDigest.slice(0, colon) : withoutDigest;
    const rule = rules.find((r) => r.name === name);
    if (!rule)
        return image;
    const newName = rule.newName ?? name;
    if (rule.digest)
        return `${newName}@${rule.digest}`;
    if (rule.newTag)
        return `${newName}:${rule.newTag}`;
    return `${newName}${image.slice(name.length)}`;
}
function setImages(object, rules) {
    const visit = (node, key) => {
        if (Array.isArray(node)) {
            if (key === 'containers' || key === 'initContainers') {
                return node.map((c) => (isMap(c) && typeof c['image'] === 'string' ? { ...c, image: applyImageRules(c['image'], rules) } : c));
            }
            return node.map((item) => visit(item));
        }
        if (isMap(node))
            return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, visit(v, k)]));
        return node;
    };
    return visit(object);
}
const identity = (o) => `${o.kind}/${o.metadata.name}`;
/** What `kubectl kustomize <dir>` renders, for the features listed above (object order aside). */
function kustomize(dir) {
    const kustomization = readKustomization(dir);
    const where = node_path_1.default.relative(manifests_1.REPO_ROOT, node_path_1.default.join(dir, 'kustomization.yaml'));
    let objects = [];
    for (const entry of kustomization.resources ?? []) {
        if (/^[a-z]+:\/\//i.test(entry) || /^(github\.com|git@)/.test(entry))
            throw new Error(`${where}: remote resource ${entry} not supported`);
        const target = node_path_1.default.resolve(dir, entry);
        if ((0, node_fs_1.statSync)(target).isDirectory())
            objects.push(...kustomize(target));
        else
            objects.push(...(0, manifests_1.parseManifests)((0, node_fs_1.readFileSync)(target, 'utf8'), node_path_1.default.relative(manifests_1.REPO_ROOT, target)));
    }
    const seen = new Set();
    for (const object of objects) {
        const id = `${identity(object)}@${object.metadata.namespace ?? ''}`;
        if (seen.has(id))
            throw new Error(`${where}: ${identity(object)} is defined twice`);
        seen.add(id);
    }
    for (const { path: file } of kustomization.patches ?? []) {
        const source = node_path_1.default.relative(manifests_1.REPO_ROOT, node_path_1.default.resolve(dir, file));
        for (const patch of (0, manifests_1.parseManifests)((0, node_fs_1.readFileSync)(node_path_1.default.resolve(dir, file), 'utf8'), source)) {
            const matches = objects.filter((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name && (patch.metadata.namespace === undefined || o.metadata.namespace === patch.metadata.namespace));
            if (matches.length !== 1)
                throw new Error(`${source}: the patch for ${identity(patch)} matches ${matches.length} objects`);
            objects = objects.map((o) => (o === matches[0] ? strategicMerge(o, patch) : o));
        }
    }
    if (kustomization.namespace) {
        const namespace = kustomization.namespace;
        objects = objects.map((o) => (CLUSTER_SCOPED.has(o.kind) ? o : { ...o, metadata: { ...o.metadata, namespace } }));
    }
    if (kustomization.images) {
        const rules = kustomization.images;
        objects = objects.map((o) => setImages(o, rules));
    }
    return objects;
}
//# sourceMappingURL=kustomize.js.map