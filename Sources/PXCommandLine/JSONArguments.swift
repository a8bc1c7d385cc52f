import ArgumentParser
import DICOMData
import PXCore
import PXPlaces

/// pypx 3.x's `--JSONargs`: the options as one JSON object, `{"PatientID": "P1", "serverPort": 4242,
/// "StudyOnly": true}`, given inline or as the path of a file holding it. Each member becomes `--NAME VALUE`
/// (`--NAME` alone for `true`; `false` and `null` are left out) and goes before the rest of the command line,
/// so an option written out on the command line wins over the same one in the object (as pypx documents).
public enum JSONArguments {
    /// The command line with every `--JSONargs VALUE` (or `--JSONargs=VALUE`) replaced by the options it holds.
    /// - Throws: `ValidationError` (a usage error): no value, an unreadable file, not a JSON object, a member
    ///   that is an array or an object.
    public static func expand(_ arguments: [String]) throws -> [String] {
        guard arguments.contains(where: { $0 == "--JSONargs" || $0.hasPrefix("--JSONargs=") }) else { return arguments }
        var options: [String] = []
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if word == "--" {
                rest += arguments[(index - 1)...]
                break
            }
            let value: String
            if word == "--JSONargs" {
                guard index < arguments.count else { throw ValidationError("--JSONargs needs a JSON object or a file") }
                value = arguments[index]
                index += 1
            } else if word.hasPrefix("--JSONargs=") {
                value = String(word.dropFirst("--JSONargs=".count))
            } else {
                rest.append(word)
                continue
            }
            do { options += try self.options(value) } catch { throw ValidationError(error.message) }
        }
        return options + rest
    }

    /// The options one `--JSONargs` value holds.
    /// - Throws: ``PXError/usage(_:)``.
    static func options(_ value: String) throws(PXError) -> [String] {
        var text = value
        if value.trimmed.first != "{" {
            guard let file = try PXConfig.readFile(value, limit: BoundedFile.argumentsLimit, role: "--JSONargs") else {
                throw .usage("--JSONargs: '\(value)' is neither a JSON object nor a readable file")
            }
            text = file
        }
        let parsed: JSONValue
        do { parsed = try JSONParser.parse(text) } catch { throw .usage("--JSONargs: \(error)") }
        guard case .object(let members) = parsed else {
            throw .usage("--JSONargs: expected a JSON object of option names and values")
        }
        var out: [String] = []
        for member in members {
            let name = member.key.hasPrefix("-") ? member.key : "--" + member.key
            switch member.value {
            case .bool(true): out.append(name)
            case .bool(false), .null: continue
            case .string(let s): out += [name, s]
            case .number(let n): out += [name, n]
            case .array, .object: throw .usage("--JSONargs: '\(member.key)' must be a string, a number or a boolean")
            }
        }
        return out
    }
}
