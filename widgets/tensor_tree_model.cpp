#include "widgets/tensor_tree_model.h"

#include "widgets/qt_util.h"

#include <map>

namespace ql {

struct TensorTreeModel::Node {
    Node* parent = nullptr;
    int row = 0;
    QString label;
    QString path;
    const TensorInfo* info = nullptr; // leaves only; points into m_tensors
    std::vector<std::unique_ptr<Node>> children;
    std::uint64_t bytes = 0; // sum over the subtree
};

namespace {

/// Splits "a.b.c" or "/a/b/c" into prefix parts; HDF5 paths use '/', safetensors names '.'.
std::vector<std::string> splitName(const std::string& name) {
    const char sep = name.find('/') != std::string::npos ? '/' : '.';
    std::vector<std::string> parts;
    std::string cur;
    for (char c : name) {
        if (c == sep) {
            if (!cur.empty()) parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) parts.push_back(cur);
    // The last two parts stay together ("down_proj.weight", "b_0" under "batch_norm_0") so that
    // leaves read as the layer's parameter, not a lone "weight".
    if (parts.size() >= 3 && sep == '.') {
        parts[parts.size() - 2] += sep + parts.back();
        parts.pop_back();
    }
    if (parts.empty()) parts.push_back(name);
    return parts;
}

QString storedTypeName(const TensorInfo& t) {
    return qs(t.storedType.empty() ? std::string(nameOf(t.dtype)) : t.storedType);
}

} // namespace

TensorTreeModel::TensorTreeModel(QObject* parent)
    : QAbstractItemModel(parent)
    , m_root(std::make_unique<Node>()) {}
TensorTreeModel::~TensorTreeModel() = default;

void TensorTreeModel::setTensors(const std::vector<TensorInfo>& tensors) {
    beginResetModel();
    m_root = std::make_unique<Node>();
    m_tensors = tensors;
    for (const TensorInfo& t : m_tensors) {
        const auto parts = splitName(t.name);
        Node* n = m_root.get();
        n->bytes += t.byteSize;
        QString path;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const QString label = qs(parts[i]);
            path = path.isEmpty() ? label : path + QLatin1Char('.') + label;
            const bool leaf = i + 1 == parts.size();
            Node* child = nullptr;
            if (!leaf)
                for (auto& c : n->children)
                    if (!c->info && c->label == label) child = c.get();
            if (!child) {
                auto made = std::make_unique<Node>();
                made->parent = n;
                made->row = static_cast<int>(n->children.size());
                made->label = label;
                made->path = leaf ? qs(t.name) : path;
                child = made.get();
                n->children.push_back(std::move(made));
            }
            if (leaf) child->info = &t;
            child->bytes += t.byteSize;
            n = child;
        }
    }
    endResetModel();
}

TensorTreeModel::Node* TensorTreeModel::nodeOf(const QModelIndex& index) const {
    return index.isValid() ? static_cast<Node*>(index.internalPointer()) : m_root.get();
}

QModelIndex TensorTreeModel::indexOfTensor(const std::string& name) const {
    const auto parts = splitName(name);
    const Node* n = m_root.get();
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const QString label = qs(parts[i]);
        const Node* next = nullptr;
        for (const auto& c : n->children)
            if (c->label == label && (i + 1 == parts.size()) == (c->info != nullptr)) next = c.get();
        if (!next) return {};
        n = next;
    }
    return createIndex(n->row, 0, const_cast<Node*>(n));
}

QModelIndex TensorTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent)) return {};
    Node* p = nodeOf(parent);
    return createIndex(row, column, p->children[static_cast<std::size_t>(row)].get());
}

QModelIndex TensorTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    Node* p = nodeOf(child)->parent;
    if (!p || p == m_root.get()) return {};
    return createIndex(p->row, 0, p);
}

int TensorTreeModel::rowCount(const QModelIndex& parent) const {
    if (parent.column() > 0) return 0;
    return static_cast<int>(nodeOf(parent)->children.size());
}

int TensorTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant TensorTreeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const Node* n = nodeOf(index);
    const TensorInfo* t = n->info;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case NameColumn:
            return n->label;
        case ShapeColumn:
            return t ? qs(toString(t->shape)) : QVariant();
        case DTypeColumn: // as the file stores it: a GGUF Q4_K tensor is no f32 one, though read as one
            return t ? storedTypeName(*t) : QVariant();
        case SizeColumn:
            return fmtBytes(static_cast<double>(n->bytes));
        }
        break;
    case Qt::ToolTipRole:
        if (t)
            return plainToolTip(
                qs(t->name) + QStringLiteral("\n") + qs(toString(t->shape)) + QLatin1Char(' ') +
                storedTypeName(*t) +
                (t->storedType.empty() ? QString() : tr(" (read as %1)").arg(qs(nameOf(t->dtype)))) +
                QStringLiteral(", ") + fmtBytes(static_cast<double>(n->bytes)) + QStringLiteral("\n") +
                qs(t->location));
        return plainToolTip(n->path + tr(": %1 entries below").arg(n->children.size()));
    case Qt::TextAlignmentRole:
        if (index.column() == SizeColumn) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case TensorNameRole:
        return t ? qs(t->name) : QString();
    case PathRole:
        return n->path;
    case SortRole:
        if (index.column() == SizeColumn) return static_cast<qulonglong>(n->bytes);
        if (index.column() == ShapeColumn && t) return static_cast<qlonglong>(elementCount(t->shape));
        return data(index, Qt::DisplayRole);
    }
    return {};
}

QVariant TensorTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case NameColumn:
        return tr("Tensor");
    case ShapeColumn:
        return tr("Shape");
    case DTypeColumn:
        return tr("DType");
    case SizeColumn:
        return tr("Size");
    }
    return {};
}

} // namespace ql
