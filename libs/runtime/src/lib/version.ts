/** The plane's release version; every service reports it in `describe`. */
export const APPHOST_VERSION = '0.1.0';
