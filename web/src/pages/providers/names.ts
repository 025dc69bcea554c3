// Display names of the provider ids (the registry's display_name wins when known).
export const PROVIDER_NAMES: Record<string, string> = {
  primary: 'Primary (code assistant)',
  messages_vendor: 'Messages vendor',
  completions_vendor: 'Completions vendor',
  assistant_vendor: 'Assistant vendor',
  custom: 'Custom endpoint',
};

export const PROVIDER_IDS = ['primary', 'messages_vendor', 'completions_vendor', 'assistant_vendor', 'custom'] as const;
