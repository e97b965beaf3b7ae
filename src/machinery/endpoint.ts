// A remote server as a kubeconfig names it: its URL and how to trust and
// reach it. The kubeconfig reader (client/) makes one; the webhook
// authorizer (auth/authz/) calls it.

export interface RemoteEndpoint {
  server: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
}
