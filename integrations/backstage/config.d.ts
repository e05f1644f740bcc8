// What the module reads from app-config (Backstage validates app-config against it).
export interface Config {
  berth?: {
    /** Where Berth answers, e.g. https://berth.example.com */
    baseUrl: string;
    /**
     * A Berth API token: `manage.py create_api_token <user> --scopes read,request`.
     * @visibility secret
     */
    token: string;
  };
}
