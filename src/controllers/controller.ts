// An in-process controller: started after the server is listening, stopped
// before the store closes. Each watches through informers and acts through
// an ApiClient.

export interface Controller {
  readonly name: string;
  /** Resolves once its informers have synced. */
  start(): Promise<void>;
  stop(): void;
}
