/**
 * The info panel (`i`), in the table's place: every address in full, the broker's kind, the
 * accounts `u` can unlock as, and the start-up notices, wrapped rather than cut.
 */
import { Box } from 'ink';
import { Text } from './Text.js';
import { addressPieces, type DashboardAddresses } from './addresses.js';
import type { DashboardAccount } from './dashboard-actions.js';

export interface InfoPanelProps {
  addresses: DashboardAddresses;
  notices: readonly string[];
  accounts: readonly DashboardAccount[];
  /** Index of the chosen account. */
  account: number;
  height: number;
}

export function InfoPanel({ addresses, notices, accounts, account, height }: InfoPanelProps) {
  return (
    <Box height={height} flexDirection="column" overflow="hidden">
      {addressPieces(addresses).map((piece) => (
        <Text key={piece.label} wrap="truncate">
          <Text dimColor>{piece.label.padEnd(8)}</Text>
          {piece.value}
        </Text>
      ))}
      {(addresses.broker?.listeners ?? []).map((listener) => (
        <Text key={listener} wrap="truncate">
          <Text dimColor>{'also'.padEnd(8)}</Text>
          {listener}
        </Text>
      ))}
      {accounts.map((each, index) => (
        <Text key={each.email ?? index} wrap="truncate">
          <Text dimColor>{(index === 0 ? 'accounts' : '').padEnd(9)}</Text>
          <Text color={index === account ? 'cyan' : undefined}>{`${index === account ? '› ' : '  '}${each.email ?? "the dashboard's"}`}</Text>
          <Text dimColor>{each.stations ? ` ${each.stations.join(' ')}` : ''}</Text>
        </Text>
      ))}
      {notices.length === 0 ? <Text dimColor>no start-up notices</Text> : null}
      {notices.map((notice) => (
        <Text key={notice} wrap="wrap" color="yellow">
          {`! ${notice}`}
        </Text>
      ))}
    </Box>
  );
}
