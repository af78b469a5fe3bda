/** Who is calling: every authenticated request, command and job acts as one of these. */
export type Principal =
  | {
      kind: 'apiKey';
      projectId: string;
      apiKeyId: string;
      /** A key with only the `frontend` scope: it reaches what a project JWT reaches, nothing more. */
      frontendOnly?: true;
    }
  | { kind: 'builder'; builderId: string; email: string }
  /** A token minted by the builder's backend and signed with one of the project's JWT keys. */
  | {
      kind: 'projectJwt';
      projectId: string;
      keyId: string;
      subject?: string;
      /** The one group a browser token acts for (its `groupRef` claim), where the token names one. */
      groupRef?: string;
    }
  | { kind: 'anonymous' };
