export { redactUrl, redactText, secretsOf } from './lib/redact';
