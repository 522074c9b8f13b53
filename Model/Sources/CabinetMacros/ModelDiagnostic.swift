import SwiftDiagnostics
import SwiftSyntax

/// The errors `@StoredModel` reports, each on the declaration it is about and
/// saying what to do.
enum ModelDiagnostic: DiagnosticMessage {
    case notAClass
    case notADirectSubclass(String, superclass: String)
    case badVersion(String, String)
    case severalBindings
    case constant(String)
    case lazy(String)
    case noType(String)
    case noDefault(String)
    case unstorable(String, Unstorable)
    case sinceOutOfRange(String, since: Int, version: Int)
    case removedOutOfRange(String, removedIn: Int, since: Int, version: Int)
    case transientAndStored(String)
    case notIndexable(String, String)
    case notText(String, String)
    case fingerprint(FingerprintProblem)

    var message: String {
        switch self {
        case .notAClass:
            return "@StoredModel applies to a class that inherits from StoredObject"
        case .notADirectSubclass(let name, let superclass):
            return "@StoredModel writes the whole record, so '\(name)' must inherit from StoredObject itself, not from '\(superclass)': "
                + "the macro cannot see the superclass's stored properties, and a record has one version, the class's, for both. "
                + "Keep what they share in a class of its own and refer to it (a '\(superclass)?' property), "
                + "or write this class's read(from:) and write(to:) by hand, calling super's first"
        case .badVersion(let attribute, let text):
            return "\(attribute) takes a version number from 1 to 255, written as a literal, not \(text)"
        case .severalBindings:
            return "declare one stored property per 'var', so that @StoredModel can give each its place in the record"
        case .constant(let name):
            return "'\(name)' is a 'let': make it a 'var' (read(from:) sets it) or mark it @Transient"
        case .lazy(let name):
            return "'\(name)' is 'lazy', which a stored property cannot be: remove 'lazy' or mark it @Transient"
        case .noType(let name):
            return "write the type of '\(name)' ('var \(name): Type = ...'): @StoredModel picks the DataBuffer method by the type as written"
        case .noDefault(let name):
            return "give '\(name)' a default value: objects get it before their record is read, and records older than the property keep it"
        case .unstorable(let name, let reason):
            return "'\(name)' cannot be stored: \(reason.advice); or mark it @Transient"
        case .sinceOutOfRange(let name, let since, let version):
            if since < 1 {
                return "@Since(\(since)) on '\(name)': versions start at 1, and a property every version's records hold needs no @Since"
            }
            return "@Since(\(since)) on '\(name)' names a version after the class's version \(version): raise @StoredModel(version:) to \(since) first"
        case .removedOutOfRange(let name, let removedIn, let since, let version):
            if removedIn > version {
                return "@Removed(in: \(removedIn)) on '\(name)' names a version after the class's version \(version): raise @StoredModel(version:) to \(removedIn) first"
            }
            return "@Removed(in: \(removedIn)) on '\(name)' must name a version after \(since == 0 ? "0 (versions start at 1)" : "the one that added it, \(since)")"
        case .transientAndStored(let name):
            return "'\(name)' is @Transient, so it cannot also be @Indexed, @FullText, @Since or @Removed"
        case .notIndexable(let name, let type):
            return "'\(name)' of type \(type) cannot be @Indexed: index a value, an optional value or an array of StoredObjects"
        case .notText(let name, let type):
            return "'\(name)' of type \(type) cannot be @FullText: a full-text index reads a String or String?"
        case .fingerprint(let problem):
            return problem.message
        }
    }

    var diagnosticID: MessageID {
        if case .fingerprint(let problem) = self { return MessageID(domain: "CabinetModel", id: "fingerprint.\(problem.id)") }
        return MessageID(domain: "CabinetModel", id: "\(self)".prefix { $0 != "(" }.description)
    }
    var severity: DiagnosticSeverity { .error }
}

extension Unstorable {
    /// What to store instead.
    var advice: String {
        switch self {
        case .generic(let name):
            return "\(name)<...> has no DataBuffer method (store an array, an optional or a StoredList<T>, or write read(from:) and write(to:) yourself)"
        case .bareObject(let name):
            return "a reference to \(name) is optional: write '\(name)?' (StoredObject? and [StoredObject] are heterogeneous references)"
        case .known(let name):
            return "\(name) has no DataBuffer method (store an array, or its raw form: a String or Data)"
        case .shape(let text):
            return "\(text) has no DataBuffer method (tuples, dictionaries, functions and existentials cannot be stored; use stored properties, arrays and optionals)"
        }
    }
}

/// A fix-it `@StoredModel` offers, by what it does.
struct ModelFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "CabinetModel", id: message.prefix { $0 != " " }.description) }
}
