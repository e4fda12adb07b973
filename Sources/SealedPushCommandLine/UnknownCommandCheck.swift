import ArgumentParser
import Foundation
import SealedPushCore

/// Finds a mistyped command word before ArgumentParser parses the line. ArgumentParser, given
/// `sealed-push-gateway serv --config gw.json`, reports the first option it cannot place ("Unknown option
/// '--config'"), not the word that is wrong; this names the word, the nearest command and every command there.
public enum UnknownCommandCheck {
    /// Walks `arguments` down `root`'s command tree while the words name commands that have subcommands.
    /// - Parameters:
    ///   - root: The program's root command.
    ///   - arguments: The command line without the program's name.
    /// - Returns: The message for a mistyped command word (what was given, where, the nearest command, every command
    ///   there, and the help to read), or `nil` when every command word is known or the line is ArgumentParser's to
    ///   judge: an option, `help`, or a command without subcommands, whose words are its own.
    public static func message(root: any ParsableCommand.Type, arguments: [String]) -> String? {
        var command = root
        var path = [root._commandName]
        for word in arguments {
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty, !word.hasPrefix("-"), word != "help",
                command.configuration.defaultSubcommand == nil
            else { return nil }
            if let next = subcommands.first(where: { $0._commandName == word || $0.configuration.aliases.contains(word) }) {
                command = next
                path.append(word)
                continue
            }
            let names = subcommands.map { $0._commandName }
            let nearest = NearestName.nearest(to: word, among: names) ?? ""
            let at = path.joined(separator: " ")
            return "Error: unknown command '\(word)' for '\(at)'; did you mean '\(nearest)'? "
                + "(its commands: \(names.joined(separator: ", ")))\n  See '\(at) --help' for more information."
        }
        return nil
    }

    /// Exits with ArgumentParser's usage status (64) after printing ``message(root:arguments:)`` to standard error,
    /// when the process's command line has a mistyped command word; returns otherwise.
    /// - Parameter root: The program's root command.
    public static func exitIfUnknown(root: any ParsableCommand.Type) {
        guard let message = message(root: root, arguments: Array(CommandLine.arguments.dropFirst())) else { return }
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(ExitCode.validationFailure.rawValue)
    }
}
